"""FrameGraph from Python: run a pipeline on the Swift engine and read its output frames (numpy)
and results (dicts).

    import framegraph as fg
    for item in fg.run("pipelines/face-detect.fg", input="clip.mp4"):
        item.index, item.time, item.frame, item.results
    fg.label("photo.jpg", max_results=5)     # [Label(text='castle', confidence=0.55, index=483), …]
"""
from ._label import FrameLabels, Label, label
from ._pipeline import Pipeline
from ._options import PipelineOptions, RunOptions
from ._run import FrameGraphError, Item, ModelError, PipelineError, RequestError, Run, RunError, library, run, run_options

__all__ = ["run", "run_options", "Run", "Item", "Pipeline", "label", "Label", "FrameLabels", "FrameGraphError", "PipelineError", "ModelError",
           "RunError", "RequestError", "RunOptions", "PipelineOptions", "library"]
__version__ = "0.3.0"
