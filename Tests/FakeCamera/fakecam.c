/*
 * fakecam.c - an emulated V4L2 capture device, loaded with LD_PRELOAD.
 *
 * The library answers for one device path (FAKECAM_PATH) that need not exist
 * on disk. Opening that path returns a real file descriptor (the read end of a
 * pipe) and every later call on that descriptor - ioctl, mmap, poll, read,
 * close - is served here, playing the kernel side of the V4L2 protocol the way
 * a UVC webcam driver on videobuf2 does. Calls on any other path or descriptor
 * go straight through to the C library.
 *
 * libv4l2 issues its own system calls through syscall(2) rather than through
 * open/ioctl/mmap, so syscall() is interposed as well.
 *
 * The model:
 *   - one device, several open handles; the handle that allocates buffers
 *     (REQBUFS) owns the queue, others get EBUSY for streaming calls;
 *   - buffers live in one memfd; mmap() of a buffer offset maps that memfd,
 *     so the application gets real shared memory and plain munmap() works;
 *   - after STREAMON a capture thread ticks at the frame rate on
 *     CLOCK_MONOTONIC. Frame n completes at t0 + (n + 1) * period; it goes
 *     into the oldest queued buffer, or is dropped when none is queued (as a
 *     real driver does), so v4l2_buffer.sequence = n shows gaps;
 *   - readiness is mirrored into each handle's pipe (one byte present while a
 *     buffer can be dequeued, or while the device is not streaming, which a
 *     real driver reports as POLLERR), so poll/select/epoll on a mix of fake
 *     and real descriptors block natively. poll() and ppoll() are interposed
 *     to report POLLERR/POLLHUP exactly as the kernel would;
 *   - unplug: after FAKECAM_UNPLUG_AFTER delivered frames the device goes
 *     away: every ioctl and mmap fails with ENODEV, poll reports
 *     POLLERR|POLLHUP (the pipe's write end is closed, so select and epoll
 *     wake too), and opening or stat-ing the path fails with ENOENT.
 *
 * Configuration is read from the environment at the first use; see README.md.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/version.h>
#include <linux/videodev2.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "fakecam_jpeg.h"
#include "fakecam_pattern.h"

#define FC_EXPORT __attribute__((visibility("default")))

enum {
    FC_MAX_SIZES = 8,
    FC_MAX_RATES = 8,
    FC_MAX_FORMATS = 2,
    FC_MAX_BUFFERS = 32,
    FC_MIN_BUFFERS = 2,
    FC_MAX_HANDLES = 16,
    FC_MAX_FD = 65536, /* descriptors above this are never fake */
};

/* ------------------------------------------------------------------------ */
/* The C library's own entry points                                          */
/* ------------------------------------------------------------------------ */

/* Looked up lazily with RTLD_NEXT: hooks can run before our constructor. */
#define REAL(name) ((__typeof__(&name))fc_real(&real_##name, #name))
static void *real_open, *real_close, *real_ioctl, *real_mmap, *real_syscall, *real_poll,
    *real_ppoll, *real_read, *real_write, *real___read_chk, *real_openat, *real_stat,
    *real_lstat, *real_fstat, *real_fstatat, *real_statx, *real_access, *real_faccessat,
    *real_euidaccess, *real_realpath, *real_canonicalize_file_name;

static void *fc_real(void **slot, const char *name)
{
    void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!p) {
        p = dlsym(RTLD_NEXT, name);
        if (!p) {
            fprintf(stderr, "fakecam: cannot find %s in the C library\n", name);
            abort();
        }
        __atomic_store_n(slot, p, __ATOMIC_RELEASE);
    }
    return p;
}

/* ------------------------------------------------------------------------ */
/* Configuration                                                             */
/* ------------------------------------------------------------------------ */

struct fc_size {
    uint32_t width, height;
};

struct fc_config {
    char path[PATH_MAX];                 /* FAKECAM_PATH */
    struct fc_size sizes[FC_MAX_SIZES];  /* FAKECAM_SIZE, first is the default */
    int nsizes;
    uint32_t rates[FC_MAX_RATES];        /* FAKECAM_FPS, frames per second */
    int nrates;
    uint32_t formats[FC_MAX_FORMATS];    /* FAKECAM_FORMATS */
    int nformats;
    unsigned long unplug_after;          /* FAKECAM_UNPLUG_AFTER, 0 = never */
    unsigned long replug_after_ms;       /* FAKECAM_REPLUG_AFTER_MS, 0 = never */
    char card[32];                       /* FAKECAM_CARD */
    char clip[PATH_MAX];                 /* FAKECAM_CLIP, raw YUYV frames */
    struct fc_size clip_size;            /* FAKECAM_CLIP_SIZE */
    bool stamp;                          /* FAKECAM_STAMP */
    int jpeg_quality;                    /* FAKECAM_JPEG_QUALITY */
    bool debug;                          /* FAKECAM_DEBUG */
};

static const char *env_or(const char *name, const char *fallback)
{
    const char *v = getenv(name);
    return v && *v ? v : fallback;
}

/* Parses "640x480,320x240" into sizes; returns the count. */
static int parse_sizes(const char *s, struct fc_size *out, int max)
{
    int n = 0;
    while (*s && n < max) {
        unsigned w, h;
        int used;
        if (sscanf(s, "%ux%u%n", &w, &h, &used) != 2 || w < 2 || h < 1 || w % 2)
            break;
        out[n++] = (struct fc_size){ w, h };
        s += used;
        if (*s == ',')
            s++;
    }
    return n;
}

static void load_config(struct fc_config *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->path, sizeof c->path, "%s", env_or("FAKECAM_PATH", "/tmp/fakecam/video0"));
    c->nsizes = parse_sizes(env_or("FAKECAM_SIZE", "640x480"), c->sizes, FC_MAX_SIZES);
    if (c->nsizes == 0)
        c->sizes[c->nsizes++] = (struct fc_size){ 640, 480 };

    const char *fps = env_or("FAKECAM_FPS", "30");
    while (*fps && c->nrates < FC_MAX_RATES) {
        char *end;
        unsigned long r = strtoul(fps, &end, 10);
        if (end == fps || r == 0 || r > 1000)
            break;
        c->rates[c->nrates++] = (uint32_t)r;
        fps = *end == ',' ? end + 1 : end;
    }
    if (c->nrates == 0)
        c->rates[c->nrates++] = 30;

    const char *fmts = env_or("FAKECAM_FORMATS", "YUYV,MJPG");
    if (strstr(fmts, "YUYV"))
        c->formats[c->nformats++] = V4L2_PIX_FMT_YUYV;
    if (strstr(fmts, "MJPG") || strstr(fmts, "MJPEG"))
        c->formats[c->nformats++] = V4L2_PIX_FMT_MJPEG;
    if (c->nformats == 0)
        c->formats[c->nformats++] = V4L2_PIX_FMT_YUYV;
    /* The first one named is the default format. */
    if (c->nformats == 2 && strstr(fmts, "MJP") < strstr(fmts, "YUYV")) {
        c->formats[0] = V4L2_PIX_FMT_MJPEG;
        c->formats[1] = V4L2_PIX_FMT_YUYV;
    }

    c->unplug_after = strtoul(env_or("FAKECAM_UNPLUG_AFTER", "0"), NULL, 10);
    c->replug_after_ms = strtoul(env_or("FAKECAM_REPLUG_AFTER_MS", "0"), NULL, 10);
    snprintf(c->card, sizeof c->card, "%s", env_or("FAKECAM_CARD", "FrameGraph Fake Camera"));
    snprintf(c->clip, sizeof c->clip, "%s", env_or("FAKECAM_CLIP", ""));
    if (parse_sizes(env_or("FAKECAM_CLIP_SIZE", ""), &c->clip_size, 1) == 0)
        c->clip_size = c->sizes[0];
    c->stamp = atoi(env_or("FAKECAM_STAMP", "1")) != 0;
    c->jpeg_quality = atoi(env_or("FAKECAM_JPEG_QUALITY", "85"));
    if (c->jpeg_quality < 1 || c->jpeg_quality > 100)
        c->jpeg_quality = 85;
    c->debug = atoi(env_or("FAKECAM_DEBUG", "0")) != 0;
}

/* ------------------------------------------------------------------------ */
/* Device state                                                              */
/* ------------------------------------------------------------------------ */

enum fc_buf_state {
    BUF_DEQUEUED, /* owned by the application */
    BUF_QUEUED,   /* waiting for a frame */
    BUF_ACTIVE,   /* being filled by the capture thread */
    BUF_DONE,     /* filled, waiting for DQBUF */
};

struct fc_buffer {
    enum fc_buf_state state;
    uint64_t order;      /* QBUF order (queued) or completion order (done) */
    uint32_t bytesused;
    uint32_t sequence;
    struct timeval timestamp;
};

/* One open() of the device path. */
struct fc_handle {
    int fd;     /* what the application holds: the read end of a pipe */
    int wfd;    /* write end; -1 after an unplug */
    bool ready; /* the pipe holds one byte */
};

static struct fc_device {
    pthread_mutex_t lock;
    pthread_cond_t done_cond; /* a buffer completed, streaming stopped or unplug */
    pthread_cond_t tick_cond; /* wakes the capture thread early (stop) */
    bool configured;
    struct fc_config cfg;
    bool unplugged;
    uint64_t unplugged_ns; /* when it was unplugged (CLOCK_MONOTONIC) */
    bool replugged;        /* FAKECAM_REPLUG_AFTER_MS has brought it back once */

    /* Current format and rate. */
    uint32_t pixelformat, width, height, fps;

    /* Open handles and the queue owner. */
    struct fc_handle *handles[FC_MAX_HANDLES];
    struct fc_handle *owner;

    /* Buffers: nbuffers slots of buf_stride bytes in memfd, also mapped at kmem. */
    struct fc_buffer buffers[FC_MAX_BUFFERS];
    uint32_t nbuffers;
    size_t buf_stride;
    int memfd;
    uint8_t *kmem;
    uint64_t order_counter;

    /* Streaming. */
    bool streaming, thread_running, stop;
    pthread_t thread;
    uint64_t t0_ns;                /* STREAMON time, CLOCK_MONOTONIC */
    unsigned long delivered, dropped;

    /* Optional clip, mapped from FAKECAM_CLIP. */
    const uint8_t *clip;
    size_t clip_frames;
} dev = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .done_cond = PTHREAD_COND_INITIALIZER,
    .memfd = -1,
};

/* Descriptor -> handle, readable without the lock (hot path of close/read/poll). */
static struct fc_handle *fd_map[FC_MAX_FD];

static struct fc_handle *handle_of(int fd)
{
    if (fd < 0 || fd >= FC_MAX_FD)
        return NULL;
    return __atomic_load_n(&fd_map[fd], __ATOMIC_ACQUIRE);
}

#define DBG(...)                                                                               \
    do {                                                                                       \
        if (dev.cfg.debug)                                                                     \
            fprintf(stderr, "fakecam: " __VA_ARGS__);                                          \
    } while (0)

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int fail(int err)
{
    errno = err;
    return -1;
}

/* Called with the lock held: loads the configuration once. */
static void ensure_configured(void)
{
    if (dev.configured)
        return;
    load_config(&dev.cfg);
    dev.pixelformat = dev.cfg.formats[0];
    dev.width = dev.cfg.sizes[0].width;
    dev.height = dev.cfg.sizes[0].height;
    dev.fps = dev.cfg.rates[0];
    static bool tick_cond_ready;
    if (!tick_cond_ready) { /* the capture thread sleeps on the monotonic clock */
        pthread_condattr_t attr;
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&dev.tick_cond, &attr);
        pthread_condattr_destroy(&attr);
        tick_cond_ready = true;
    }
    dev.configured = true;
    DBG("device %s, %ux%u @ %u fps, %d format(s)\n", dev.cfg.path, dev.width, dev.height,
        dev.fps, dev.cfg.nformats);
}

static bool is_device_path(const char *path)
{
    if (!path || path[0] != '/')
        return false;
    pthread_mutex_lock(&dev.lock);
    ensure_configured();
    bool match = strcmp(path, dev.cfg.path) == 0;
    pthread_mutex_unlock(&dev.lock);
    return match;
}

/* ------------------------------------------------------------------------ */
/* Readiness                                                                 */
/* ------------------------------------------------------------------------ */

static bool any_buffer_in(enum fc_buf_state state)
{
    for (uint32_t i = 0; i < dev.nbuffers; i++)
        if (dev.buffers[i].state == state)
            return true;
    return false;
}

/* Takes the readiness byte out of a handle's pipe. The application's end may
 * be in blocking mode, so look before reading: never block with the lock held. */
static void drain_byte(struct fc_handle *h)
{
    struct pollfd p = { .fd = h->fd, .events = POLLIN };
    char byte;
    if (REAL(poll)(&p, 1, 0) == 1 && (p.revents & POLLIN))
        REAL(read)(h->fd, &byte, 1);
    h->ready = false;
}

/* Lock held. Makes each handle's pipe readable exactly when poll() on a real
 * device would return: a done buffer, or an error because not streaming. */
static void update_readiness(void)
{
    bool want = !dev.streaming || any_buffer_in(BUF_DONE);
    for (int i = 0; i < FC_MAX_HANDLES; i++) {
        struct fc_handle *h = dev.handles[i];
        if (!h || h->wfd < 0 || h->ready == want)
            continue;
        char byte = 0;
        if (want)
            h->ready = REAL(write)(h->wfd, &byte, 1) == 1;
        else
            drain_byte(h);
    }
}

/* Lock held: the device disappears. */
static void unplug_locked(void)
{
    if (dev.unplugged)
        return;
    DBG("unplugged after %lu frames\n", dev.delivered);
    dev.unplugged = true;
    dev.unplugged_ns = now_ns();
    dev.stop = true;
    for (int i = 0; i < FC_MAX_HANDLES; i++) {
        struct fc_handle *h = dev.handles[i];
        if (!h || h->wfd < 0)
            continue;
        if (h->ready)
            drain_byte(h);
        REAL(close)(h->wfd); /* poll/select/epoll now see a hang-up */
        h->wfd = -1;
    }
    pthread_cond_broadcast(&dev.done_cond);
    pthread_cond_broadcast(&dev.tick_cond);
}

/* Lock held: with FAKECAM_REPLUG_AFTER_MS, the device comes back (once) that long
 * after the unplug, as soon as every descriptor of it has been closed, with
 * FAKECAM_UNPLUG_AFTER no longer in force. */
static void maybe_replug_locked(void)
{
    if (!dev.unplugged || dev.replugged || dev.cfg.replug_after_ms == 0)
        return;
    if (now_ns() < dev.unplugged_ns + dev.cfg.replug_after_ms * 1000000u)
        return;
    for (int i = 0; i < FC_MAX_HANDLES; i++)
        if (dev.handles[i])
            return;
    DBG("plugged back in after %lu ms\n", dev.cfg.replug_after_ms);
    dev.unplugged = false;
    dev.replugged = true;
    dev.cfg.unplug_after = 0;
}

/* ------------------------------------------------------------------------ */
/* Frame production                                                          */
/* ------------------------------------------------------------------------ */

/* Nearest-neighbour copy of clip frame n into a YUYV frame of width x height. */
static void render_clip(uint8_t *dst, uint32_t width, uint32_t height, uint64_t n)
{
    const struct fc_size cs = dev.cfg.clip_size;
    const uint8_t *src = dev.clip + (size_t)(n % dev.clip_frames) * cs.width * cs.height * 2;
    for (uint32_t y = 0; y < height; y++) {
        const uint8_t *srow = src + (size_t)(y * cs.height / height) * cs.width * 2;
        uint8_t *drow = dst + (size_t)y * width * 2;
        for (uint32_t x = 0; x < width; x += 2) {
            const uint8_t *p = srow + (size_t)(x * cs.width / width / 2) * 4;
            drow[2 * x + 0] = p[0];
            drow[2 * x + 1] = p[1];
            drow[2 * x + 2] = p[2];
            drow[2 * x + 3] = p[3];
        }
    }
}

/* Renders frame n into dst; returns bytesused (0 on failure). Runs without
 * the lock: format and buffers cannot change while streaming. */
static uint32_t render_frame(uint8_t *dst, size_t cap, uint8_t *scratch, uint64_t n)
{
    uint32_t w = dev.width, h = dev.height;
    uint8_t *yuyv = dev.pixelformat == V4L2_PIX_FMT_YUYV ? dst : scratch;
    if (dev.clip)
        render_clip(yuyv, w, h, n);
    else
        fakecam_pattern_yuyv(yuyv, (int)w, (int)h, (size_t)w * 2, (uint32_t)n);
    if (dev.cfg.stamp)
        fakecam_stamp_yuyv(yuyv, (int)w, (int)h, (size_t)w * 2, (uint32_t)n);
    if (dev.pixelformat == V4L2_PIX_FMT_YUYV)
        return w * h * 2;
    return (uint32_t)fakecam_jpeg_encode_yuyv(yuyv, (int)w, (int)h, (size_t)w * 2,
                                              dev.cfg.jpeg_quality, dst, cap);
}

static struct fc_buffer *oldest(enum fc_buf_state state)
{
    struct fc_buffer *best = NULL;
    for (uint32_t i = 0; i < dev.nbuffers; i++) {
        struct fc_buffer *b = &dev.buffers[i];
        if (b->state == state && (!best || b->order < best->order))
            best = b;
    }
    return best;
}

/* The "sensor": one iteration per frame period, from STREAMON to STREAMOFF. */
static void *capture_thread(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL); /* signals are the application's */

    pthread_mutex_lock(&dev.lock);
    const uint64_t period_ns = 1000000000u / dev.fps;
    uint8_t *scratch = malloc((size_t)dev.width * dev.height * 2);
    uint64_t n = 0;            /* sensor frame counter = v4l2_buffer.sequence */
    uint64_t unplug_armed = 0; /* frame at which the last allowed frame was delivered */

    while (!dev.stop) {
        /* Frame n is complete at the end of its period. */
        uint64_t due = dev.t0_ns + (n + 1) * 1000000000u / dev.fps;
        struct timespec ts = { (time_t)(due / 1000000000u), (long)(due % 1000000000u) };
        while (!dev.stop && now_ns() < due)
            pthread_cond_timedwait(&dev.tick_cond, &dev.lock, &ts);
        if (dev.stop)
            break;

        if (dev.cfg.unplug_after && dev.delivered >= dev.cfg.unplug_after) {
            /* Leave the application time to dequeue the last frames (at most
             * one second), then disappear. */
            if (!any_buffer_in(BUF_DONE) || n - unplug_armed >= dev.fps) {
                unplug_locked();
                break;
            }
            n++;
            continue;
        }

        struct fc_buffer *b = oldest(BUF_QUEUED);
        if (!b) {
            dev.dropped++; /* nowhere to put it: the frame is lost */
            DBG("frame %llu dropped: no buffer queued\n", (unsigned long long)n);
        } else {
            b->state = BUF_ACTIVE;
            uint8_t *mem = dev.kmem + (size_t)(b - dev.buffers) * dev.buf_stride;
            pthread_mutex_unlock(&dev.lock);
            uint32_t used = scratch ? render_frame(mem, dev.buf_stride, scratch, n) : 0;
            pthread_mutex_lock(&dev.lock);
            if (dev.stop)
                break;
            b->state = BUF_DONE;
            b->order = ++dev.order_counter;
            b->bytesused = used;
            b->sequence = (uint32_t)n;
            b->timestamp.tv_sec = (time_t)(due / 1000000000u);
            b->timestamp.tv_usec = (suseconds_t)(due % 1000000000u / 1000u);
            if (++dev.delivered == dev.cfg.unplug_after)
                unplug_armed = n;
            update_readiness();
            pthread_cond_broadcast(&dev.done_cond);
        }
        n++;

        /* If we fell more than a period behind (overloaded machine), the
         * frames in between are lost, as with a real sensor. */
        uint64_t late = now_ns();
        if (late > due + 2 * period_ns) {
            uint64_t skip = (late - dev.t0_ns) / period_ns - 1 - n;
            if ((int64_t)skip > 0) {
                n += skip;
                dev.dropped += skip;
            }
        }
    }
    pthread_mutex_unlock(&dev.lock);
    free(scratch);
    return NULL;
}

/* Lock held; returns with the lock held. Stops the capture thread. */
static void join_capture_thread(void)
{
    if (!dev.thread_running)
        return;
    dev.stop = true;
    dev.thread_running = false;
    pthread_t t = dev.thread;
    pthread_cond_broadcast(&dev.tick_cond);
    pthread_mutex_unlock(&dev.lock);
    pthread_join(t, NULL);
    pthread_mutex_lock(&dev.lock);
}

/* ------------------------------------------------------------------------ */
/* Buffers and streaming                                                     */
/* ------------------------------------------------------------------------ */

static uint32_t sizeimage(void) { return dev.width * dev.height * 2; }

/* Lock held. Buffers still mapped by the application stay valid: they keep
 * the memfd's pages alive ("orphaned", as videobuf2 does). */
static void free_buffers(void)
{
    if (dev.kmem)
        munmap(dev.kmem, dev.nbuffers * dev.buf_stride);
    if (dev.memfd >= 0)
        REAL(close)(dev.memfd);
    dev.kmem = NULL;
    dev.memfd = -1;
    dev.nbuffers = 0;
    dev.owner = NULL;
}

static int alloc_buffers(uint32_t count)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t stride = (sizeimage() + page - 1) / page * page;
    int fd = memfd_create("fakecam-buffers", MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    if (ftruncate(fd, (off_t)(stride * count)) < 0) {
        REAL(close)(fd);
        return -1;
    }
    void *mem = REAL(mmap)(NULL, stride * count, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (mem == MAP_FAILED) {
        REAL(close)(fd);
        return -1;
    }
    dev.memfd = fd;
    dev.kmem = mem;
    dev.buf_stride = stride;
    dev.nbuffers = count;
    memset(dev.buffers, 0, sizeof dev.buffers);
    return 0;
}

/* Lock held. */
static void stream_off(void)
{
    join_capture_thread();
    dev.streaming = false;
    for (uint32_t i = 0; i < dev.nbuffers; i++)
        dev.buffers[i].state = BUF_DEQUEUED;
    update_readiness();
    pthread_cond_broadcast(&dev.done_cond);
}

static int stream_on(void)
{
    if (dev.streaming)
        return 0;
    if (dev.cfg.clip[0] && !dev.clip) {
        /* Map the clip once; it stays mapped for the life of the process. */
        int fd = REAL(open)(dev.cfg.clip, O_RDONLY | O_CLOEXEC);
        struct stat st;
        size_t frame = (size_t)dev.cfg.clip_size.width * dev.cfg.clip_size.height * 2;
        if (fd < 0 || REAL(fstat)(fd, &st) < 0 || (size_t)st.st_size < frame) {
            fprintf(stderr, "fakecam: cannot use clip %s (need raw YUYV %ux%u frames)\n",
                    dev.cfg.clip, dev.cfg.clip_size.width, dev.cfg.clip_size.height);
            if (fd >= 0)
                REAL(close)(fd);
            return fail(EIO);
        }
        void *p = REAL(mmap)(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        REAL(close)(fd);
        if (p == MAP_FAILED)
            return fail(EIO);
        dev.clip = p;
        dev.clip_frames = (size_t)st.st_size / frame;
    }
    dev.streaming = true;
    dev.stop = false;
    dev.delivered = 0;
    dev.dropped = 0;
    dev.t0_ns = now_ns();
    if (pthread_create(&dev.thread, NULL, capture_thread, NULL) != 0) {
        dev.streaming = false;
        return fail(ENOMEM);
    }
    dev.thread_running = true;
    update_readiness();
    return 0;
}

/* ------------------------------------------------------------------------ */
/* ioctl                                                                     */
/* ------------------------------------------------------------------------ */

static bool format_offered(uint32_t pixelformat)
{
    for (int i = 0; i < dev.cfg.nformats; i++)
        if (dev.cfg.formats[i] == pixelformat)
            return true;
    return false;
}

static const struct fc_size *nearest_size(uint32_t w, uint32_t h)
{
    const struct fc_size *best = &dev.cfg.sizes[0];
    long best_d = LONG_MAX;
    for (int i = 0; i < dev.cfg.nsizes; i++) {
        const struct fc_size *s = &dev.cfg.sizes[i];
        long d = labs((long)s->width - (long)w) + labs((long)s->height - (long)h);
        if (d < best_d) {
            best = s;
            best_d = d;
        }
    }
    return best;
}

static uint32_t nearest_rate(uint32_t numerator, uint32_t denominator)
{
    if (numerator == 0 || denominator == 0)
        return dev.fps;
    uint32_t best = dev.cfg.rates[0];
    double want = (double)denominator / numerator, best_d = 1e30;
    for (int i = 0; i < dev.cfg.nrates; i++) {
        double d = dev.cfg.rates[i] > want ? dev.cfg.rates[i] - want : want - dev.cfg.rates[i];
        if (d < best_d) {
            best = dev.cfg.rates[i];
            best_d = d;
        }
    }
    return best;
}

/* TRY_FMT: adjusts the request to what the device can do. */
static void adjust_format(struct v4l2_pix_format *p)
{
    if (!format_offered(p->pixelformat))
        p->pixelformat = dev.cfg.formats[0];
    const struct fc_size *s = nearest_size(p->width, p->height);
    p->width = s->width;
    p->height = s->height;
    p->field = V4L2_FIELD_NONE;
    p->bytesperline = p->pixelformat == V4L2_PIX_FMT_YUYV ? p->width * 2 : 0;
    p->sizeimage = p->width * p->height * 2;
    p->colorspace = V4L2_COLORSPACE_SRGB;
    p->priv = 0;
    p->flags = 0;
    p->ycbcr_enc = V4L2_YCBCR_ENC_DEFAULT;
    p->quantization = V4L2_QUANTIZATION_DEFAULT;
    p->xfer_func = V4L2_XFER_FUNC_DEFAULT;
}

static void current_format(struct v4l2_pix_format *p)
{
    memset(p, 0, sizeof *p);
    p->pixelformat = dev.pixelformat;
    p->width = dev.width;
    p->height = dev.height;
    adjust_format(p);
}

static void fill_buffer_info(uint32_t index, struct v4l2_buffer *out)
{
    const struct fc_buffer *b = &dev.buffers[index];
    memset(out, 0, sizeof *out);
    out->index = index;
    out->type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    out->memory = V4L2_MEMORY_MMAP;
    out->m.offset = (uint32_t)(index * dev.buf_stride);
    out->length = (uint32_t)dev.buf_stride;
    out->field = V4L2_FIELD_NONE;
    out->flags = V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC | V4L2_BUF_FLAG_TSTAMP_SRC_EOF;
    if (b->state == BUF_QUEUED || b->state == BUF_ACTIVE)
        out->flags |= V4L2_BUF_FLAG_QUEUED;
    if (b->state == BUF_DONE)
        out->flags |= V4L2_BUF_FLAG_DONE;
    if (b->state == BUF_DONE || b->state == BUF_DEQUEUED) {
        out->bytesused = b->bytesused;
        out->sequence = b->sequence;
        out->timestamp = b->timestamp;
    }
}

static const char *fourcc(uint32_t f, char out[5])
{
    for (int i = 0; i < 4; i++)
        out[i] = (char)((f >> (8 * i)) & 0xFF);
    out[4] = 0;
    return out;
}

/* Blocking DQBUF waits here (lock held). Returns 0 with a done buffer. */
static int wait_for_done(struct fc_handle *h)
{
    for (;;) {
        if (dev.unplugged)
            return fail(ENODEV);
        if (!dev.streaming)
            return fail(EINVAL);
        if (any_buffer_in(BUF_DONE))
            return 0;
        if (fcntl(h->fd, F_GETFL) & O_NONBLOCK)
            return fail(EAGAIN);
        pthread_cond_wait(&dev.done_cond, &dev.lock);
    }
}

/* Queue calls are reserved to the handle that allocated the buffers. */
static int check_owner(struct fc_handle *h)
{
    return dev.owner && dev.owner != h ? fail(EBUSY) : 0;
}

/* Lock held. The kernel side of every V4L2 ioctl we know. */
static int device_ioctl(struct fc_handle *h, unsigned long request, void *arg)
{
    char fcc[5];
    if (dev.unplugged)
        return fail(ENODEV);

    switch (request) {
    case VIDIOC_QUERYCAP: {
        struct v4l2_capability *cap = arg;
        memset(cap, 0, sizeof *cap);
        snprintf((char *)cap->driver, sizeof cap->driver, "fakecam");
        snprintf((char *)cap->card, sizeof cap->card, "%s", dev.cfg.card);
        snprintf((char *)cap->bus_info, sizeof cap->bus_info, "platform:fakecam");
        cap->version = LINUX_VERSION_CODE;
        cap->device_caps = V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_STREAMING;
        cap->capabilities = cap->device_caps | V4L2_CAP_DEVICE_CAPS;
        return 0;
    }

    case VIDIOC_ENUM_FMT: {
        struct v4l2_fmtdesc *f = arg;
        if (f->type != V4L2_BUF_TYPE_VIDEO_CAPTURE || f->index >= (uint32_t)dev.cfg.nformats)
            return fail(EINVAL);
        uint32_t index = f->index, type = f->type;
        memset(f, 0, sizeof *f);
        f->index = index;
        f->type = type;
        f->pixelformat = dev.cfg.formats[index];
        if (f->pixelformat == V4L2_PIX_FMT_MJPEG) {
            f->flags = V4L2_FMT_FLAG_COMPRESSED;
            snprintf((char *)f->description, sizeof f->description, "Motion-JPEG");
        } else {
            snprintf((char *)f->description, sizeof f->description, "YUYV 4:2:2");
        }
        return 0;
    }

    case VIDIOC_ENUM_FRAMESIZES: {
        struct v4l2_frmsizeenum *s = arg;
        if (!format_offered(s->pixel_format) || s->index >= (uint32_t)dev.cfg.nsizes)
            return fail(EINVAL);
        s->type = V4L2_FRMSIZE_TYPE_DISCRETE;
        s->discrete.width = dev.cfg.sizes[s->index].width;
        s->discrete.height = dev.cfg.sizes[s->index].height;
        memset(s->reserved, 0, sizeof s->reserved);
        return 0;
    }

    case VIDIOC_ENUM_FRAMEINTERVALS: {
        struct v4l2_frmivalenum *iv = arg;
        const struct fc_size *s = nearest_size(iv->width, iv->height);
        if (!format_offered(iv->pixel_format) || s->width != iv->width ||
            s->height != iv->height || iv->index >= (uint32_t)dev.cfg.nrates)
            return fail(EINVAL);
        iv->type = V4L2_FRMIVAL_TYPE_DISCRETE;
        iv->discrete.numerator = 1;
        iv->discrete.denominator = dev.cfg.rates[iv->index];
        memset(iv->reserved, 0, sizeof iv->reserved);
        return 0;
    }

    case VIDIOC_G_FMT:
    case VIDIOC_TRY_FMT:
    case VIDIOC_S_FMT: {
        struct v4l2_format *f = arg;
        if (f->type != V4L2_BUF_TYPE_VIDEO_CAPTURE)
            return fail(EINVAL);
        if (request == VIDIOC_G_FMT) {
            current_format(&f->fmt.pix);
            return 0;
        }
        adjust_format(&f->fmt.pix);
        if (request == VIDIOC_TRY_FMT)
            return 0;
        if (dev.nbuffers || dev.streaming) /* vb2_is_busy() */
            return fail(EBUSY);
        dev.pixelformat = f->fmt.pix.pixelformat;
        dev.width = f->fmt.pix.width;
        dev.height = f->fmt.pix.height;
        DBG("S_FMT %s %ux%u\n", fourcc(dev.pixelformat, fcc), dev.width, dev.height);
        return 0;
    }

    case VIDIOC_G_PARM:
    case VIDIOC_S_PARM: {
        struct v4l2_streamparm *p = arg;
        if (p->type != V4L2_BUF_TYPE_VIDEO_CAPTURE)
            return fail(EINVAL);
        if (request == VIDIOC_S_PARM) {
            if (dev.streaming)
                return fail(EBUSY);
            dev.fps = nearest_rate(p->parm.capture.timeperframe.numerator,
                                   p->parm.capture.timeperframe.denominator);
            DBG("S_PARM %u fps\n", dev.fps);
        }
        memset(&p->parm, 0, sizeof p->parm);
        p->parm.capture.capability = V4L2_CAP_TIMEPERFRAME;
        p->parm.capture.timeperframe.numerator = 1;
        p->parm.capture.timeperframe.denominator = dev.fps;
        return 0;
    }

    case VIDIOC_ENUMINPUT: {
        struct v4l2_input *in = arg;
        if (in->index != 0)
            return fail(EINVAL);
        memset(in, 0, sizeof *in);
        snprintf((char *)in->name, sizeof in->name, "Camera 1");
        in->type = V4L2_INPUT_TYPE_CAMERA;
        return 0;
    }
    case VIDIOC_G_INPUT:
        *(int *)arg = 0;
        return 0;
    case VIDIOC_S_INPUT:
        return *(int *)arg == 0 ? 0 : fail(EINVAL);

    case VIDIOC_G_PRIORITY:
        *(uint32_t *)arg = V4L2_PRIORITY_DEFAULT;
        return 0;
    case VIDIOC_S_PRIORITY:
        return 0;

    /* No controls, no cropping: what libv4l2/libv4lconvert probe for. */
    case VIDIOC_QUERYCTRL:
    case VIDIOC_QUERY_EXT_CTRL:
    case VIDIOC_QUERYMENU:
    case VIDIOC_G_CTRL:
    case VIDIOC_S_CTRL:
    case VIDIOC_G_EXT_CTRLS:
    case VIDIOC_S_EXT_CTRLS:
    case VIDIOC_TRY_EXT_CTRLS:
    case VIDIOC_CROPCAP:
    case VIDIOC_G_CROP:
    case VIDIOC_S_CROP:
    case VIDIOC_G_SELECTION:
    case VIDIOC_S_SELECTION:
        return fail(EINVAL);

    case VIDIOC_REQBUFS: {
        struct v4l2_requestbuffers *r = arg;
        if (r->type != V4L2_BUF_TYPE_VIDEO_CAPTURE || r->memory != V4L2_MEMORY_MMAP)
            return fail(EINVAL);
        if (check_owner(h) || dev.streaming)
            return fail(EBUSY);
        free_buffers();
        if (r->count > 0) {
            uint32_t count = r->count < FC_MIN_BUFFERS   ? FC_MIN_BUFFERS
                             : r->count > FC_MAX_BUFFERS ? FC_MAX_BUFFERS
                                                         : r->count;
            if (alloc_buffers(count) < 0)
                return fail(ENOMEM);
            dev.owner = h;
        }
        r->count = dev.nbuffers;
        r->capabilities = V4L2_BUF_CAP_SUPPORTS_MMAP;
        r->flags = 0;
        DBG("REQBUFS %u buffers of %zu bytes\n", dev.nbuffers, dev.buf_stride);
        return 0;
    }

    case VIDIOC_QUERYBUF: {
        struct v4l2_buffer *b = arg;
        if (b->type != V4L2_BUF_TYPE_VIDEO_CAPTURE || b->index >= dev.nbuffers)
            return fail(EINVAL);
        fill_buffer_info(b->index, b);
        return 0;
    }

    case VIDIOC_QBUF: {
        struct v4l2_buffer *b = arg;
        if (check_owner(h))
            return -1;
        if (b->type != V4L2_BUF_TYPE_VIDEO_CAPTURE || b->memory != V4L2_MEMORY_MMAP ||
            b->index >= dev.nbuffers || dev.buffers[b->index].state != BUF_DEQUEUED)
            return fail(EINVAL);
        dev.buffers[b->index].state = BUF_QUEUED;
        dev.buffers[b->index].order = ++dev.order_counter;
        fill_buffer_info(b->index, b);
        return 0;
    }

    case VIDIOC_DQBUF: {
        struct v4l2_buffer *b = arg;
        if (check_owner(h))
            return -1;
        if (b->type != V4L2_BUF_TYPE_VIDEO_CAPTURE || b->memory != V4L2_MEMORY_MMAP)
            return fail(EINVAL);
        if (wait_for_done(h) < 0)
            return -1;
        struct fc_buffer *done = oldest(BUF_DONE);
        done->state = BUF_DEQUEUED;
        fill_buffer_info((uint32_t)(done - dev.buffers), b);
        update_readiness();
        return 0;
    }

    case VIDIOC_STREAMON:
    case VIDIOC_STREAMOFF: {
        if (*(int *)arg != V4L2_BUF_TYPE_VIDEO_CAPTURE)
            return fail(EINVAL);
        if (check_owner(h))
            return -1;
        if (request == VIDIOC_STREAMOFF) {
            stream_off();
            DBG("STREAMOFF (%lu delivered, %lu dropped)\n", dev.delivered, dev.dropped);
            return 0;
        }
        if (dev.nbuffers == 0)
            return fail(EINVAL);
        DBG("STREAMON %s %ux%u @ %u fps\n", fourcc(dev.pixelformat, fcc), dev.width,
            dev.height, dev.fps);
        return stream_on();
    }

    default:
        DBG("unsupported ioctl 0x%08lx (type '%c' nr %lu)\n", request,
            (int)_IOC_TYPE(request), (unsigned long)_IOC_NR(request));
        return fail(ENOTTY);
    }
}

/* ------------------------------------------------------------------------ */
/* Descriptor-level operations shared by the libc and syscall() hooks        */
/* ------------------------------------------------------------------------ */

static int device_open(int flags)
{
    pthread_mutex_lock(&dev.lock);
    int fds[2] = { -1, -1 }, slot = -1, err = 0;
    maybe_replug_locked();
    if (dev.unplugged) {
        err = ENOENT;
        goto out;
    }
    if (flags & O_DIRECTORY) {
        err = ENOTDIR;
        goto out;
    }
    for (int i = 0; i < FC_MAX_HANDLES && slot < 0; i++)
        if (!dev.handles[i])
            slot = i;
    if (slot < 0) {
        err = EMFILE;
        goto out;
    }
    if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0) {
        err = errno;
        goto out;
    }
    /* The application's descriptor keeps the open() flags it asked for. */
    if (!(flags & O_CLOEXEC))
        fcntl(fds[0], F_SETFD, 0);
    if (!(flags & O_NONBLOCK))
        fcntl(fds[0], F_SETFL, 0);
    struct fc_handle *h = calloc(1, sizeof *h);
    if (!h || fds[0] >= FC_MAX_FD) {
        free(h);
        REAL(close)(fds[0]);
        REAL(close)(fds[1]);
        err = h ? EMFILE : ENOMEM;
        goto out;
    }
    h->fd = fds[0];
    h->wfd = fds[1];
    dev.handles[slot] = h;
    __atomic_store_n(&fd_map[h->fd], h, __ATOMIC_RELEASE);
    update_readiness();
    DBG("open -> fd %d\n", h->fd);
out:
    pthread_mutex_unlock(&dev.lock);
    return err ? fail(err) : fds[0];
}

static int device_close(struct fc_handle *h)
{
    pthread_mutex_lock(&dev.lock);
    if (dev.owner == h) {
        stream_off();
        free_buffers();
    }
    for (int i = 0; i < FC_MAX_HANDLES; i++)
        if (dev.handles[i] == h)
            dev.handles[i] = NULL;
    __atomic_store_n(&fd_map[h->fd], NULL, __ATOMIC_RELEASE);
    if (h->wfd >= 0)
        REAL(close)(h->wfd);
    int rc = REAL(close)(h->fd);
    DBG("close fd %d\n", h->fd);
    free(h);
    pthread_mutex_unlock(&dev.lock);
    return rc;
}

static int device_ioctl_entry(struct fc_handle *h, unsigned long request, void *arg)
{
    /* The kernel ignores the upper 32 bits of the request. */
    request = (unsigned int)request;
    pthread_mutex_lock(&dev.lock);
    int rc = device_ioctl(h, request, arg);
    int err = errno;
    pthread_mutex_unlock(&dev.lock);
    errno = err;
    return rc;
}

static void *device_mmap(void *addr, size_t len, int prot, int flags, off_t offset)
{
    pthread_mutex_lock(&dev.lock);
    void *p = MAP_FAILED;
    int err = 0;
    if (dev.unplugged)
        err = ENODEV;
    else if (!(flags & MAP_SHARED)) /* videobuf2 insists on shared mappings */
        err = EINVAL;
    else if (offset < 0 || dev.buf_stride == 0 || (size_t)offset % dev.buf_stride ||
             (size_t)offset / dev.buf_stride >= dev.nbuffers || len == 0 ||
             len > dev.buf_stride)
        err = EINVAL;
    else if ((p = REAL(mmap)(addr, len, prot, flags, dev.memfd, offset)) == MAP_FAILED)
        err = errno;
    pthread_mutex_unlock(&dev.lock);
    if (err)
        errno = err;
    return p;
}

/* ------------------------------------------------------------------------ */
/* poll                                                                      */
/* ------------------------------------------------------------------------ */

/* What poll() must report for a fake descriptor regardless of the pipe, or 0
 * to use the pipe's own answer (lock held). */
static short forced_revents(void)
{
    if (dev.unplugged)
        return POLLERR | POLLHUP | POLLPRI;
    if (!dev.streaming)
        return POLLERR;
    return 0;
}

typedef int (*poll_fn)(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
                       const sigset_t *mask, int timeout_ms);

static int call_poll(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
                     const sigset_t *mask, int timeout_ms, bool is_ppoll)
{
    if (is_ppoll)
        return REAL(ppoll)(fds, n, timeout, mask);
    return REAL(poll)(fds, n, timeout_ms);
}

static int device_poll(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
                       const sigset_t *mask, int timeout_ms, bool is_ppoll)
{
    bool any_fake = false, any_forced = false;
    for (nfds_t i = 0; i < n; i++)
        if (handle_of(fds[i].fd))
            any_fake = true;
    if (!any_fake)
        return call_poll(fds, n, timeout, mask, timeout_ms, is_ppoll);

    pthread_mutex_lock(&dev.lock);
    any_forced = forced_revents() != 0;
    pthread_mutex_unlock(&dev.lock);

    /* A forced state is ready now: only look at the other descriptors. */
    static const struct timespec zero = { 0, 0 };
    int rc = any_forced ? call_poll(fds, n, &zero, mask, 0, is_ppoll)
                        : call_poll(fds, n, timeout, mask, timeout_ms, is_ppoll);
    if (rc < 0)
        return rc;

    pthread_mutex_lock(&dev.lock);
    short forced = forced_revents();
    rc = 0;
    for (nfds_t i = 0; i < n; i++) {
        if (handle_of(fds[i].fd)) {
            short allowed = fds[i].events | POLLERR | POLLHUP;
            if (forced)
                fds[i].revents = forced & allowed;
            else
                fds[i].revents &= (POLLIN | POLLRDNORM) & allowed;
        }
        rc += fds[i].revents != 0;
    }
    pthread_mutex_unlock(&dev.lock);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Interposed C library entry points                                         */
/* ------------------------------------------------------------------------ */

static void fake_stat(struct stat *st)
{
    memset(st, 0, sizeof *st);
    st->st_mode = S_IFCHR | 0660;
    st->st_rdev = makedev(81, 0); /* the V4L2 major */
    st->st_nlink = 1;
    st->st_uid = getuid();
    st->st_gid = getgid();
    st->st_blksize = 4096;
}

/* Path lookups of the device node: 1 = handled (result in *rc), 0 = not ours. */
static int path_lookup(const char *path, int *rc)
{
    if (!is_device_path(path))
        return 0;
    pthread_mutex_lock(&dev.lock);
    maybe_replug_locked();
    bool gone = dev.unplugged;
    pthread_mutex_unlock(&dev.lock);
    *rc = gone ? fail(ENOENT) : 0;
    return 1;
}

static mode_t mode_arg(int flags, va_list ap)
{
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(ap, mode_t) : 0;
}

FC_EXPORT int open(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    if (is_device_path(path))
        return device_open(flags);
    return REAL(open)(path, flags, mode);
}

FC_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    if (is_device_path(path))
        return device_open(flags);
    return REAL(openat)(dirfd, path, flags, mode);
}

/* Fortified variants (_FORTIFY_SOURCE) and 64-bit names, all the same on x86-64. */
FC_EXPORT int open64(const char *path, int flags, ...) __attribute__((alias("open")));
FC_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
    __attribute__((alias("openat")));
FC_EXPORT int __open_2(const char *path, int flags) { return open(path, flags); }
FC_EXPORT int __open64_2(const char *path, int flags) { return open(path, flags); }
FC_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
    return openat(dirfd, path, flags);
}
FC_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
    return openat(dirfd, path, flags);
}

FC_EXPORT int close(int fd)
{
    struct fc_handle *h = handle_of(fd);
    return h ? device_close(h) : REAL(close)(fd);
}

FC_EXPORT int ioctl(int fd, unsigned long request, ...)
{
    va_list ap;
    va_start(ap, request);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    struct fc_handle *h = handle_of(fd);
    return h ? device_ioctl_entry(h, request, arg) : REAL(ioctl)(fd, request, arg);
}

FC_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset)
{
    if (handle_of(fd))
        return device_mmap(addr, len, prot, flags, offset);
    return REAL(mmap)(addr, len, prot, flags, fd, offset);
}
FC_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t offset)
    __attribute__((alias("mmap")));

/* The device has no read() I/O (no V4L2_CAP_READWRITE): EINVAL, as the kernel. */
FC_EXPORT ssize_t read(int fd, void *buf, size_t count)
{
    return handle_of(fd) ? fail(EINVAL) : REAL(read)(fd, buf, count);
}
FC_EXPORT ssize_t __read_chk(int fd, void *buf, size_t count, size_t buflen)
{
    return handle_of(fd) ? fail(EINVAL) : REAL(__read_chk)(fd, buf, count, buflen);
}
FC_EXPORT ssize_t write(int fd, const void *buf, size_t count)
{
    return handle_of(fd) ? fail(EINVAL) : REAL(write)(fd, buf, count);
}

FC_EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
    return device_poll(fds, n, NULL, NULL, timeout_ms, false);
}
FC_EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
                    const sigset_t *mask)
{
    return device_poll(fds, n, timeout, mask, 0, true);
}
FC_EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout_ms, size_t fdslen)
{
    (void)fdslen;
    return poll(fds, n, timeout_ms);
}
FC_EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
                          const sigset_t *mask, size_t fdslen)
{
    (void)fdslen;
    return ppoll(fds, n, timeout, mask);
}

/* stat and friends: the path looks like a character device while plugged. */
FC_EXPORT int stat(const char *path, struct stat *st)
{
    int rc;
    if (path_lookup(path, &rc)) {
        if (rc == 0)
            fake_stat(st);
        return rc;
    }
    return REAL(stat)(path, st);
}
FC_EXPORT int lstat(const char *path, struct stat *st)
{
    int rc;
    if (path_lookup(path, &rc)) {
        if (rc == 0)
            fake_stat(st);
        return rc;
    }
    return REAL(lstat)(path, st);
}
FC_EXPORT int fstat(int fd, struct stat *st)
{
    if (handle_of(fd)) {
        fake_stat(st);
        return 0;
    }
    return REAL(fstat)(fd, st);
}
FC_EXPORT int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
    int rc;
    if ((flags & AT_EMPTY_PATH) && !*path && handle_of(dirfd))
        return fstat(dirfd, st);
    if (path_lookup(path, &rc)) {
        if (rc == 0)
            fake_stat(st);
        return rc;
    }
    return REAL(fstatat)(dirfd, path, st, flags);
}
FC_EXPORT int stat64(const char *path, struct stat64 *st) __attribute__((alias("stat")));
FC_EXPORT int lstat64(const char *path, struct stat64 *st) __attribute__((alias("lstat")));
FC_EXPORT int fstat64(int fd, struct stat64 *st) __attribute__((alias("fstat")));
FC_EXPORT int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
    __attribute__((alias("fstatat")));

FC_EXPORT int statx(int dirfd, const char *path, int flags, unsigned int mask,
                    struct statx *stx)
{
    int rc;
    bool empty_fd = (flags & AT_EMPTY_PATH) && !*path && handle_of(dirfd);
    if (empty_fd || path_lookup(path, &rc)) {
        if (!empty_fd && rc < 0)
            return rc;
        memset(stx, 0, sizeof *stx);
        stx->stx_mask = STATX_BASIC_STATS;
        stx->stx_mode = S_IFCHR | 0660;
        stx->stx_nlink = 1;
        stx->stx_uid = getuid();
        stx->stx_gid = getgid();
        stx->stx_blksize = 4096;
        stx->stx_rdev_major = 81;
        return 0;
    }
    return REAL(statx)(dirfd, path, flags, mask, stx);
}

FC_EXPORT int access(const char *path, int amode)
{
    int rc;
    if (path_lookup(path, &rc))
        return rc == 0 && (amode & X_OK) ? fail(EACCES) : rc;
    return REAL(access)(path, amode);
}
FC_EXPORT int faccessat(int dirfd, const char *path, int amode, int flags)
{
    int rc;
    if (path_lookup(path, &rc))
        return rc == 0 && (amode & X_OK) ? fail(EACCES) : rc;
    return REAL(faccessat)(dirfd, path, amode, flags);
}
FC_EXPORT int euidaccess(const char *path, int amode)
{
    int rc;
    if (path_lookup(path, &rc))
        return rc == 0 && (amode & X_OK) ? fail(EACCES) : rc;
    return REAL(euidaccess)(path, amode);
}
FC_EXPORT int eaccess(const char *path, int amode) __attribute__((alias("euidaccess")));

FC_EXPORT char *realpath(const char *path, char *resolved)
{
    int rc;
    if (path_lookup(path, &rc)) {
        if (rc < 0)
            return NULL;
        if (!resolved)
            return strdup(path);
        snprintf(resolved, PATH_MAX, "%s", path);
        return resolved;
    }
    return REAL(realpath)(path, resolved);
}
FC_EXPORT char *canonicalize_file_name(const char *path)
{
    int rc;
    if (path_lookup(path, &rc))
        return rc < 0 ? NULL : strdup(path);
    return REAL(canonicalize_file_name)(path);
}

/* libv4l2 (and anything else) calling the kernel through syscall(). */
FC_EXPORT long syscall(long number, ...)
{
    va_list ap;
    va_start(ap, number);
    long a1 = va_arg(ap, long), a2 = va_arg(ap, long), a3 = va_arg(ap, long);
    long a4 = va_arg(ap, long), a5 = va_arg(ap, long), a6 = va_arg(ap, long);
    va_end(ap);
    struct fc_handle *h;

    switch (number) {
    case SYS_open:
        if (is_device_path((const char *)a1))
            return device_open((int)a2);
        break;
    case SYS_openat:
        if (is_device_path((const char *)a2))
            return device_open((int)a3);
        break;
    case SYS_close:
        if ((h = handle_of((int)a1)))
            return device_close(h);
        break;
    case SYS_ioctl:
        if ((h = handle_of((int)a1)))
            return device_ioctl_entry(h, (unsigned long)a2, (void *)a3);
        break;
    case SYS_mmap: /* SYS_mmap2 does not exist on 64-bit targets */
        if (handle_of((int)a5))
            return (long)device_mmap((void *)a1, (size_t)a2, (int)a3, (int)a4, (off_t)a6);
        break;
    case SYS_read:
    case SYS_write:
        if (handle_of((int)a1))
            return fail(EINVAL);
        break;
    }
    return REAL(syscall)(number, a1, a2, a3, a4, a5, a6);
}

/* ------------------------------------------------------------------------ */
/* Control API for tests (find it with dlsym(RTLD_DEFAULT, ...))             */
/* ------------------------------------------------------------------------ */

/* Unplugs the device now, as FAKECAM_UNPLUG_AFTER would. */
FC_EXPORT void fakecam_unplug(void)
{
    pthread_mutex_lock(&dev.lock);
    ensure_configured();
    unplug_locked();
    pthread_mutex_unlock(&dev.lock);
}

/* Plugs the device back in, re-reading the environment (so a test can
 * setenv() and call it). Fails with EBUSY while any handle is open. */
FC_EXPORT int fakecam_reset(void)
{
    pthread_mutex_lock(&dev.lock);
    for (int i = 0; i < FC_MAX_HANDLES; i++)
        if (dev.handles[i]) {
            pthread_mutex_unlock(&dev.lock);
            return fail(EBUSY);
        }
    dev.configured = false;
    dev.unplugged = false;
    ensure_configured();
    pthread_mutex_unlock(&dev.lock);
    return 0;
}

/* Frames delivered into buffers and frames dropped (no buffer queued) since
 * the last STREAMON. */
FC_EXPORT void fakecam_counters(unsigned long *delivered, unsigned long *dropped)
{
    pthread_mutex_lock(&dev.lock);
    *delivered = dev.delivered;
    *dropped = dev.dropped;
    pthread_mutex_unlock(&dev.lock);
}
