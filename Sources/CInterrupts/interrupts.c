// See fg_interrupts.h. The handler does only async-signal-safe work: an atomic add, unlink, _exit.
#include "fg_interrupts.h"
#include "fg_tempfiles.h"
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

static atomic_long received;
static atomic_int holding;

static void on_signal(int sig) {
    (void)sig;
    long count = atomic_fetch_add(&received, 1) + 1;
    if (count > 1 || !atomic_load(&holding)) {
        fg_tempfiles_unlink_all();
        _exit(130);
    }
}

/// Whether the command is `framegraph run` (its first argument), read from /proc/self/cmdline: a run
/// holds the first signal from the very start, so an early Ctrl-C still ends it with its stats.
static int command_is_run(void) {
    char buffer[4096];
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buffer, sizeof buffer - 1);
    close(fd);
    if (n <= 0) return 0;
    buffer[n] = 0;
    size_t first = strlen(buffer) + 1;  // argv[0], then argv[1]
    return (ssize_t)first < n && strcmp(buffer + first, "run") == 0;
}

__attribute__((constructor)) static void fg_interrupts_install(void) {
    if (command_is_run()) atomic_store(&holding, 1);
    // A parent may start us with these signals blocked (a thread pool's mask is inherited across
    // exec): unblock them, or they would stay pending and Ctrl-C would do nothing.
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGHUP, &action, NULL);  // a closed terminal: as SIGTERM
}

long fg_interrupts_count(void) { return atomic_load(&received); }
void fg_interrupts_hold(void) { atomic_store(&holding, 1); }
