// Temporary files being written (SafeFiles.AtomicFile), kept where a signal handler can remove them:
// a fixed table of paths, changed under a lock by ordinary code, read by unlink_all without one
// (async-signal-safe: only unlink and plain loads).
#ifndef FRAMEGRAPH_TEMPFILES_H
#define FRAMEGRAPH_TEMPFILES_H

/// Records `path`; returns its slot (≥ 0), or -1 when the table is full (the file is then only
/// removed by its owner).
int fg_tempfiles_register(const char *path);
/// Forgets the slot (its file was committed or discarded).
void fg_tempfiles_unregister(int slot);
/// Removes every recorded file (from a signal handler, just before the process ends).
void fg_tempfiles_unlink_all(void);

#endif
