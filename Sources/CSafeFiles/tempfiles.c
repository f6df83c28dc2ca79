// See fg_tempfiles.h.
#include "fg_tempfiles.h"
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

enum { SLOTS = 256 };
static char paths[SLOTS][PATH_MAX];
static atomic_int used[SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

int fg_tempfiles_register(const char *path) {
    if (!path || strlen(path) >= PATH_MAX) return -1;
    pthread_mutex_lock(&lock);
    int slot = -1;
    for (int i = 0; i < SLOTS; i++) {
        if (atomic_load(&used[i]) == 0) { slot = i; break; }
    }
    if (slot >= 0) {
        strcpy(paths[slot], path);
        atomic_store(&used[slot], 1);  // published after the path is in place
    }
    pthread_mutex_unlock(&lock);
    return slot;
}

void fg_tempfiles_unregister(int slot) {
    if (slot < 0 || slot >= SLOTS) return;
    pthread_mutex_lock(&lock);
    atomic_store(&used[slot], 0);
    pthread_mutex_unlock(&lock);
}

void fg_tempfiles_unlink_all(void) {
    for (int i = 0; i < SLOTS; i++) {
        if (atomic_load(&used[i])) unlink(paths[i]);
    }
}
