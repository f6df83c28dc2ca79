import FrameGraph
