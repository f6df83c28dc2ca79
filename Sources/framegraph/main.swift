print("framegraph")
