"""Hosted models from Python, as the CLI's deployment story checks them (DeploymentServerTests):
a collection served by the nginx test server (tools/fgtools/deploy_server.py), a live run with
hot_swap and update_interval, a new deployment published while it runs: the running pipeline
switches at a frame boundary, items before it labelled by the old model and after it by the new."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

import pytest
from conftest import FACE_DETECT, ROOT, run_cli

import framegraph as fg

MODELS = ROOT / "models/cache"


def top_label(item: fg.Item) -> Optional[str]:
    classes = item.results.get("classifications") or []
    return str(classes[0]["label"]) if classes else None


def test_hot_swap_switches_the_running_pipeline_to_a_new_deployment(cli: str, sample: str, scratch: Path) -> None:
    deploy_server = pytest.importorskip("fgtools.deploy_server")
    classifier = MODELS / "efficientnet_lite0.onnx"
    if not classifier.is_file():
        pytest.fail(f"needs {classifier} (scripts/test.sh fetches it)")
    publisher, keys, tree = scratch / "publisher.fgsign", scratch / "keys", scratch / "tree"
    keys.mkdir()
    run_cli(cli, ["deploy", "key", "new", "-o", str(publisher)])
    # Version 2: the same network, every label marked "v2 " (tools/deploy/make_classifier_v2.py).
    subprocess.run([sys.executable, str(ROOT / "tools/deploy/make_classifier_v2.py"), str(classifier), str(scratch / "v2.onnx")], check=True)
    run_cli(cli, ["model", "archive", str(classifier), "--name", "FlowerClassifier", "--version", "1", "-o", str(scratch / "c1.fgarchive")])
    run_cli(cli, ["model", "archive", str(scratch / "v2.onnx"), "--name", "FlowerClassifier", "--version", "2", "-o", str(scratch / "c2.fgarchive")])
    run_cli(cli, ["deploy", "collection", str(tree), "FlowerModels", "--sign", str(publisher)])
    run_cli(cli, ["deploy", "deployment", str(tree), "FlowerModels", "summer", f"FlowerClassifier={scratch / 'c2.fgarchive'}",
                  "--sign", str(publisher)])
    with deploy_server.start(str(tree), keys=str(keys), token="test-token-1") as server:
        machine = scratch / "machine.json"
        machine.write_text(json.dumps({"format": "framegraph-machine-1", "server": server.https, "caFile": server.ca,
                                       "publisherKey": json.loads(publisher.read_text())["publicKey"],
                                       "cacheDir": str(scratch / "cache"), "attempts": 2, "timeoutSeconds": 5}))
        labels: List[Optional[str]] = []
        published = False
        with fg.run("label-video", input=sample, machine_config=machine, mode="live", loop=True, duration=8, hot_swap=True,
                    update_interval=1, set={"labels.model": "collection:FlowerModels/FlowerClassifier"}, output=scratch / "swap.mp4",
                    frames=False) as run:
            for item in run:
                labels.append(top_label(item))
                if len(labels) == 45 and not published:
                    # 1.5 s in: version 1 is published as the new default deployment.
                    run_cli(cli, ["deploy", "deployment", str(tree), "FlowerModels", "autumn", f"FlowerClassifier={scratch / 'c1.fgarchive'}",
                                  "--default", "--sign", str(publisher)])
                    published = True
        stats = run.stats
    node = next(n for n in stats["nodes"] if n["name"] == "labels")
    assert node["modelSwaps"] == 1, node
    assert "deployment autumn" in node["modelSource"], node["modelSource"]
    seen = [label for label in labels if label is not None]
    first_new = next((i for i, label in enumerate(seen) if not label.startswith("v2 ")), None)
    assert first_new is not None, "no item labelled by the new model"
    assert first_new > 30, f"the switch came after the publication: item {first_new}"
    assert all(label.startswith("v2 ") for label in seen[:first_new]) and not any(label.startswith("v2 ") for label in seen[first_new:]), \
        "items before the switch by the old model, after it by the new one"


def test_hot_swap_and_update_interval_need_a_hosted_model(sample: str) -> None:
    for options in ({"hot_swap": True}, {"update_interval": 5.0}):
        with pytest.raises(fg.RequestError) as e:
            fg.run(FACE_DETECT, input=sample, **options)  # type: ignore[arg-type]
        assert "apply to pipelines whose models come from a collection" in str(e.value)
