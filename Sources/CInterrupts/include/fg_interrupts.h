// Ctrl-C, SIGTERM and SIGHUP for the framegraph command, caught from before main runs (a
// constructor): each is counted; the first asks the run to stop cleanly when a run holds them
// (fg_interrupts_hold), otherwise — or on a second one — the temporary files being written are
// removed and the process ends with status 130.
#ifndef FRAMEGRAPH_INTERRUPTS_H
#define FRAMEGRAPH_INTERRUPTS_H

/// Signals received so far.
long fg_interrupts_count(void);
/// A run will finish cleanly on the first signal (until then the first one ends the process).
void fg_interrupts_hold(void);

#endif
