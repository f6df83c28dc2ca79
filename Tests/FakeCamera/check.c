/*
 * check.c - end-to-end check of a V4L2 capture device.
 *
 * By default it goes through libv4l2 (v4l2_open/v4l2_ioctl/v4l2_mmap) and
 * asks for RGB24, so libv4lconvert converts from whatever the camera sends
 * (YUYV or MJPEG). With -R it uses plain open/ioctl/mmap and the camera's own
 * format instead. It lists formats, sizes and intervals, captures frames while
 * polling the device together with an ordinary pipe, decodes the frame numbers
 * stamped into the pixels (see fakecam_pattern.h), and checks order, timing
 * and, with -u, the unplug behaviour. Works on real devices too (-m off).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libv4l2.h>
#include <linux/videodev2.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fakecam_pattern.h"

enum { NBUFFERS = 4 };

/* The I/O entry points: libv4l2's or the C library's. */
struct io {
    int (*open)(const char *, int, ...);
    int (*close)(int);
    int (*ioctl)(int, unsigned long, ...);
    void *(*mmap)(void *, size_t, int, int, int, int64_t);
    int (*munmap)(void *, size_t);
};

static void *plain_mmap(void *a, size_t l, int p, int f, int fd, int64_t o)
{
    return mmap(a, l, p, f, fd, (off_t)o);
}

static const struct io libv4l2_io = { v4l2_open, v4l2_close, v4l2_ioctl, v4l2_mmap, v4l2_munmap };
static const struct io plain_io = { open, close, ioctl, plain_mmap, munmap };

static int failures;

static void check(bool ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("  [%s] ", ok ? "ok" : "FAIL");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    if (!ok)
        failures++;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *fourcc(uint32_t f)
{
    static char s[5];
    for (int i = 0; i < 4; i++)
        s[i] = (char)(f >> (8 * i));
    return s;
}

static int xioctl(const struct io *io, int fd, unsigned long req, void *arg)
{
    int rc;
    do
        rc = io->ioctl(fd, req, arg);
    while (rc < 0 && errno == EINTR);
    return rc;
}

/* Prints every format, size and interval the device (or libv4l2) offers. */
static void list_formats(const struct io *io, int fd)
{
    struct v4l2_fmtdesc f = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
    for (f.index = 0; xioctl(io, fd, VIDIOC_ENUM_FMT, &f) == 0; f.index++) {
        printf("  format %s '%s'%s\n", fourcc(f.pixelformat), f.description,
               f.flags & V4L2_FMT_FLAG_EMULATED ? " (emulated by libv4lconvert)" : "");
        struct v4l2_frmsizeenum s = { .pixel_format = f.pixelformat };
        for (s.index = 0; xioctl(io, fd, VIDIOC_ENUM_FRAMESIZES, &s) == 0; s.index++) {
            if (s.type != V4L2_FRMSIZE_TYPE_DISCRETE) {
                printf("    sizes %ux%u .. %ux%u\n", s.stepwise.min_width,
                       s.stepwise.min_height, s.stepwise.max_width, s.stepwise.max_height);
                break;
            }
            printf("    %ux%u:", s.discrete.width, s.discrete.height);
            struct v4l2_frmivalenum iv = { .pixel_format = f.pixelformat,
                                           .width = s.discrete.width,
                                           .height = s.discrete.height };
            for (iv.index = 0; xioctl(io, fd, VIDIOC_ENUM_FRAMEINTERVALS, &iv) == 0; iv.index++) {
                if (iv.type == V4L2_FRMIVAL_TYPE_DISCRETE)
                    printf(" %u/%u s", iv.discrete.numerator, iv.discrete.denominator);
                else {
                    printf(" stepwise");
                    break;
                }
            }
            printf("\n");
        }
    }
}

/* Box-filters one channel (sample x at x * step) to half size, into out, and
 * decodes the stamp there: the pattern must survive scaling down by 2. */
static int decode_half(const uint8_t *px, int w, int h, size_t stride, size_t step,
                       uint8_t *out, uint32_t *n)
{
    for (int y = 0; y < h / 2; y++)
        for (int x = 0; x < w / 2; x++) {
            const uint8_t *p = px + (size_t)(2 * y) * stride + (size_t)(2 * x) * step;
            out[y * (w / 2) + x] = (uint8_t)((p[0] + p[step] + p[stride] + p[stride + step] + 2) / 4);
        }
    return fakecam_decode(out, w / 2, h / 2, (size_t)(w / 2), 1, n);
}

static void *blocked_dqbuf(void *arg)
{
    int fd = *(int *)arg;
    struct v4l2_buffer b = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP };
    /* No buffer is queued: this waits until STREAMOFF from the main thread. */
    long rc = ioctl(fd, VIDIOC_DQBUF, &b) < 0 ? errno : 0;
    return (void *)rc;
}

/* -X: protocol corner cases, through plain open/ioctl/mmap/poll/select. */
static void edge_cases(const char *path, unsigned width, unsigned height)
{
    const struct io *io = &plain_io;
    int fd = open(path, O_RDWR | O_NONBLOCK);
    if (fd < 0) {
        check(false, "open %s: %s", path, strerror(errno));
        return;
    }
    struct pollfd p = { .fd = fd, .events = POLLIN };
    int rc = poll(&p, 1, 0);
    check(rc == 1 && p.revents == POLLERR, "poll before STREAMON -> POLLERR (0x%x)", p.revents);
    char byte;
    rc = (int)read(fd, &byte, 1);
    check(rc < 0 && errno == EINVAL, "read() -> EINVAL (no read I/O)");

    struct v4l2_format fmt = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
    fmt.fmt.pix = (struct v4l2_pix_format){ .width = width, .height = height,
                                            .pixelformat = V4L2_PIX_FMT_YUYV };
    xioctl(io, fd, VIDIOC_S_FMT, &fmt);
    struct v4l2_requestbuffers req = { .count = 2, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
                                       .memory = V4L2_MEMORY_MMAP };
    check(xioctl(io, fd, VIDIOC_REQBUFS, &req) == 0, "REQBUFS 2");
    rc = xioctl(io, fd, VIDIOC_S_FMT, &fmt);
    check(rc < 0 && errno == EBUSY, "S_FMT with buffers allocated -> EBUSY");

    int fd2 = open(path, O_RDWR);
    struct v4l2_capability cap;
    check(fd2 >= 0 && xioctl(io, fd2, VIDIOC_QUERYCAP, &cap) == 0, "second open + QUERYCAP");
    struct v4l2_requestbuffers req2 = req;
    rc = xioctl(io, fd2, VIDIOC_REQBUFS, &req2);
    check(rc < 0 && errno == EBUSY, "REQBUFS from a second handle -> EBUSY");
    close(fd2);

    struct v4l2_buffer b = { .index = 0, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
                             .memory = V4L2_MEMORY_MMAP };
    xioctl(io, fd, VIDIOC_QUERYBUF, &b);
    void *m = mmap(NULL, b.length, PROT_READ, MAP_PRIVATE, fd, b.m.offset);
    check(m == MAP_FAILED && errno == EINVAL, "MAP_PRIVATE mapping -> EINVAL");
    m = mmap(NULL, b.length, PROT_READ, MAP_SHARED, fd, b.m.offset);
    check(m != MAP_FAILED, "MAP_SHARED mapping");

    check(xioctl(io, fd, VIDIOC_QBUF, &b) == 0, "QBUF 0");
    rc = xioctl(io, fd, VIDIOC_QBUF, &b);
    check(rc < 0 && errno == EINVAL, "QBUF of a queued buffer -> EINVAL");

    enum v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    xioctl(io, fd, VIDIOC_STREAMON, &type);
    struct v4l2_buffer d = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP };
    rc = xioctl(io, fd, VIDIOC_DQBUF, &d);
    check(rc < 0 && errno == EAGAIN, "non-blocking DQBUF before the first frame -> EAGAIN");

    fd_set rd;
    FD_ZERO(&rd);
    FD_SET(fd, &rd);
    struct timeval tv = { 1, 0 };
    rc = select(fd + 1, &rd, NULL, NULL, &tv);
    check(rc == 1 && FD_ISSET(fd, &rd), "select() wakes up for a frame");
    rc = xioctl(io, fd, VIDIOC_DQBUF, &d);
    uint32_t stamp = 0;
    int decoded = fakecam_decode_yuyv(m, (int)width, (int)height, width * 2, &stamp);
    check(rc == 0 && d.index == 0 && decoded == 0 && stamp == d.sequence,
          "DQBUF after select: sequence %u, stamp %u", d.sequence, stamp);
    rc = poll(&p, 1, 100);
    check(rc == 0, "poll with nothing queued times out");

    /* A blocking DQBUF in another thread ends with EINVAL at STREAMOFF. */
    fcntl(fd, F_SETFL, 0);
    pthread_t t;
    void *res = NULL;
    pthread_create(&t, NULL, blocked_dqbuf, &fd);
    usleep(100000);
    xioctl(io, fd, VIDIOC_STREAMOFF, &type);
    pthread_join(t, &res);
    check((long)res == EINVAL, "blocked DQBUF -> EINVAL at STREAMOFF (%s)", strerror((int)(long)res));
    munmap(m, b.length);

    /* The control API: unplug and replug within one process. */
    void (*unplug)(void) = dlsym(RTLD_DEFAULT, "fakecam_unplug");
    int (*reset)(void) = dlsym(RTLD_DEFAULT, "fakecam_reset");
    if (unplug && reset) {
        unplug();
        rc = poll(&p, 1, 1000);
        check(rc == 1 && (p.revents & (POLLERR | POLLHUP)) == (POLLERR | POLLHUP),
              "fakecam_unplug(): poll -> 0x%x", p.revents);
        check(reset() < 0 && errno == EBUSY, "fakecam_reset() while open -> EBUSY");
        close(fd);
        check(reset() == 0 && (fd = open(path, O_RDWR)) >= 0,
              "fakecam_reset() after close: the device is back");
    }
    check(close(fd) == 0, "close");
}

static void usage(void)
{
    fprintf(stderr,
            "usage: check [-d device] [-n frames] [-s WxH] [-r fps] [-m seq|increasing|off]\n"
            "             [-u N] [-F fourcc] [-S ms] [-R] [-l]\n"
            "  -d  device path (default $FAKECAM_PATH, else /tmp/fakecam/video0)\n"
            "  -n  frames to capture (60)        -s  size (640x480)   -r  rate (30)\n"
            "  -m  stamp check: seq = stamp equals v4l2_buffer.sequence (fakecam pattern),\n"
            "      increasing = stamps strictly increase (a stamped clip), off = none\n"
            "  -u  expect an unplug (ENODEV) after N frames (FAKECAM_UNPLUG_AFTER=N)\n"
            "  -F  format to ask for: RGB3 (default), YU12 or YUYV; with -R YUYV or MJPG\n"
            "  -S  sleep ms after each frame (a slow consumer: expect dropped frames)\n"
            "  -R  plain open/ioctl/mmap instead of libv4l2 (default format YUYV)\n"
            "  -l  list formats only\n"
            "  -X  protocol corner cases (plain calls, YUYV, stamps)\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *dev_path = getenv("FAKECAM_PATH") ? getenv("FAKECAM_PATH") : "/tmp/fakecam/video0";
    unsigned frames = 60, width = 640, height = 480, fps = 30, unplug_after = 0;
    const char *mode = "seq";
    const char *want = NULL;
    unsigned sleep_ms = 0;
    bool raw = false, list_only = false, edges = false;
    int opt;
    while ((opt = getopt(argc, argv, "d:n:s:r:m:u:F:S:RlX")) != -1) {
        switch (opt) {
        case 'd': dev_path = optarg; break;
        case 'n': frames = (unsigned)atoi(optarg); break;
        case 's': if (sscanf(optarg, "%ux%u", &width, &height) != 2) usage(); break;
        case 'r': fps = (unsigned)atoi(optarg); break;
        case 'm': mode = optarg; break;
        case 'u': unplug_after = (unsigned)atoi(optarg); break;
        case 'R': raw = true; break;
        case 'F': if (strlen(optarg) != 4) usage(); want = optarg; break;
        case 'S': sleep_ms = (unsigned)atoi(optarg); break;
        case 'l': list_only = true; break;
        case 'X': edges = true; break;
        default: usage();
        }
    }
    if (unplug_after)
        frames = unplug_after;
    const struct io *io = raw ? &plain_io : &libv4l2_io;
    const bool stamp_seq = !strcmp(mode, "seq"), stamp_inc = !strcmp(mode, "increasing");

    if (edges) {
        printf("== %s: corner cases\n", dev_path);
        edge_cases(dev_path, width, height);
        printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
        return failures ? 1 : 0;
    }
    printf("== %s via %s\n", dev_path, raw ? "open/ioctl/mmap" : "libv4l2");
    int fd = io->open(dev_path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        printf("  cannot open %s: %s\n", dev_path, strerror(errno));
        return 1;
    }
    struct stat st;
    check(stat(dev_path, &st) == 0 && S_ISCHR(st.st_mode), "stat: character device");

    /* (Each ioctl runs before check() so that its results are what is printed.) */
    struct v4l2_capability cap = { 0 };
    int rc = xioctl(io, fd, VIDIOC_QUERYCAP, &cap);
    check(rc == 0, "QUERYCAP: driver '%s', card '%s'",
          cap.driver, cap.card);
    check((cap.device_caps & V4L2_CAP_VIDEO_CAPTURE) && (cap.device_caps & V4L2_CAP_STREAMING),
          "capabilities: video capture + streaming");
    list_formats(io, fd);
    if (list_only)
        return io->close(fd) == 0 && failures == 0 ? 0 : 1;

    /* Format and rate. */
    struct v4l2_format fmt = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
    fmt.fmt.pix.width = width;
    fmt.fmt.pix.height = height;
    if (!want)
        want = raw ? "YUYV" : "RGB3";
    fmt.fmt.pix.pixelformat = v4l2_fourcc(want[0], want[1], want[2], want[3]);
    fmt.fmt.pix.field = V4L2_FIELD_NONE;
    rc = xioctl(io, fd, VIDIOC_S_FMT, &fmt);
    check(rc == 0 && fmt.fmt.pix.width == width && !memcmp(fourcc(fmt.fmt.pix.pixelformat), want, 4) &&
              fmt.fmt.pix.height == height,
          "S_FMT: %s %ux%u, %u bytes per line", fourcc(fmt.fmt.pix.pixelformat),
          fmt.fmt.pix.width, fmt.fmt.pix.height, fmt.fmt.pix.bytesperline);
    const uint32_t pixfmt = fmt.fmt.pix.pixelformat;
    const size_t stride = fmt.fmt.pix.bytesperline;

    struct v4l2_streamparm parm = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
    parm.parm.capture.timeperframe = (struct v4l2_fract){ 1, fps };
    rc = xioctl(io, fd, VIDIOC_S_PARM, &parm);
    check(rc == 0 &&
              parm.parm.capture.timeperframe.denominator == fps *
                                                                parm.parm.capture.timeperframe.numerator,
          "S_PARM: %u/%u s per frame", parm.parm.capture.timeperframe.numerator,
          parm.parm.capture.timeperframe.denominator);

    /* Buffers. */
    struct v4l2_requestbuffers req = { .count = NBUFFERS,
                                       .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
                                       .memory = V4L2_MEMORY_MMAP };
    if (xioctl(io, fd, VIDIOC_REQBUFS, &req) < 0 || req.count == 0) {
        check(false, "REQBUFS: %s", strerror(errno));
        return 1;
    }
    void *mem[32];
    size_t len[32];
    for (unsigned i = 0; i < req.count && i < 32; i++) {
        struct v4l2_buffer b = { .index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
                                 .memory = V4L2_MEMORY_MMAP };
        if (xioctl(io, fd, VIDIOC_QUERYBUF, &b) < 0 ||
            (mem[i] = io->mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                               b.m.offset)) == MAP_FAILED) {
            check(false, "QUERYBUF/mmap buffer %u: %s", i, strerror(errno));
            return 1;
        }
        len[i] = b.length;
        xioctl(io, fd, VIDIOC_QBUF, &b);
    }
    check(true, "REQBUFS/QUERYBUF/mmap/QBUF: %u buffers", req.count);

    /* A plain pipe polled together with the camera: it must not disturb it. */
    int other[2];
    if (pipe(other) < 0)
        return 1;

    enum v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    check(xioctl(io, fd, VIDIOC_STREAMON, &type) == 0, "STREAMON");
    const double t_start = now_s();

    unsigned got = 0, gaps = 0, bad_stamps = 0, bad_half = 0, order_errors = 0, ts_errors = 0;
    uint8_t *half = malloc((size_t)width * height / 4 + 1);
    long last_seq = -1, last_stamp = -1;
    double last_ts = 0, t_last = t_start, first_ts = 0;
    uint32_t first_seq = 0;
    while (got < frames) {
        struct pollfd p[2] = { { .fd = other[0], .events = POLLIN },
                               { .fd = fd, .events = POLLIN } };
        int n = poll(p, 2, 2000);
        if (n <= 0 || !(p[1].revents & POLLIN) || p[0].revents) {
            check(false, "poll: %d, revents 0x%x (frame %u)", n, p[1].revents, got);
            break;
        }
        struct v4l2_buffer b = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP };
        if (xioctl(io, fd, VIDIOC_DQBUF, &b) < 0) {
            check(false, "DQBUF: %s (frame %u)", strerror(errno), got);
            break;
        }
        const double t = now_s();
        const double ts = b.timestamp.tv_sec + b.timestamp.tv_usec / 1e6;
        if (got == 0) {
            first_ts = ts;
            first_seq = b.sequence;
        }
        t_last = t;

        /* Monotonic timestamps, close to now. */
        if (!(b.flags & V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC) || ts <= last_ts || ts > t ||
            t - ts > 0.5)
            ts_errors++;
        last_ts = ts;

        if (last_seq >= 0 && b.sequence != (uint32_t)last_seq + 1)
            gaps += b.sequence - (uint32_t)last_seq - 1;
        if ((long)b.sequence <= last_seq)
            order_errors++;
        last_seq = b.sequence;

        /* The stamp. */
        uint32_t stamp = 0, half_stamp = 0;
        int decoded = -1;
        size_t step = 0; /* bytes between the samples of one channel */
        const uint8_t *px = mem[b.index];
        if (pixfmt == V4L2_PIX_FMT_RGB24 || pixfmt == V4L2_PIX_FMT_BGR24)
            step = 3;
        else if (pixfmt == V4L2_PIX_FMT_YUYV)
            step = 2;
        else if (pixfmt == V4L2_PIX_FMT_YUV420 || pixfmt == V4L2_PIX_FMT_YVU420)
            step = 1; /* the luma plane comes first */
        if (step) {
            decoded = fakecam_decode(px, (int)width, (int)height, stride, step, &stamp);
            if ((stamp_seq || stamp_inc) && decoded == 0 &&
                (decode_half(px, (int)width, (int)height, stride, step, half, &half_stamp) < 0 ||
                 half_stamp != stamp))
                bad_half++;
        }
        else if (pixfmt == V4L2_PIX_FMT_MJPEG && (b.bytesused < 4 || px[0] != 0xFF || px[1] != 0xD8))
            bad_stamps++; /* not a JPEG (SOI marker); stamps are not decoded here */
        if (stamp_seq || stamp_inc) {
            if (decoded < 0 && pixfmt != V4L2_PIX_FMT_MJPEG)
                bad_stamps++;
            else if (decoded == 0 && stamp_seq && stamp != (b.sequence & FAKECAM_STAMP_MASK))
                bad_stamps++;
            else if (decoded == 0 && stamp_inc && (long)stamp <= last_stamp)
                bad_stamps++;
            if (decoded == 0)
                last_stamp = stamp;
        }
        if (got < 3 || got + 1 == frames)
            printf("  frame %u: buffer %u, sequence %u, stamp %s%u, %u bytes, ts %.6f\n", got,
                   b.index, b.sequence, decoded == 0 ? "" : "(none) ", stamp, b.bytesused, ts);
        got++;
        if (sleep_ms)
            usleep(sleep_ms * 1000);
        if (got < frames || !unplug_after)
            xioctl(io, fd, VIDIOC_QBUF, &b);
    }

    const double elapsed = t_last - t_start;
    const double expected = (double)(last_seq + 1) / fps;
    check(got == frames, "captured %u of %u frames", got, frames);
    check(order_errors == 0, "sequence numbers increase (%u gaps = dropped frames)", gaps);
    if (sleep_ms)
        check(gaps > 0, "a slow consumer loses frames (%u dropped)", gaps);
    if (stamp_seq || stamp_inc) {
        check(bad_stamps == 0, "stamped frame numbers %s (%u bad)",
              stamp_seq ? "match the sequence numbers" : "increase", bad_stamps);
        if (pixfmt != V4L2_PIX_FMT_MJPEG)
            check(bad_half == 0, "stamps decode after scaling by 1/2 (%u bad)", bad_half);
    }
    check(ts_errors == 0, "timestamps monotonic, CLOCK_MONOTONIC, recent (%u bad)", ts_errors);
    /* A slow consumer dequeues each frame late by up to NBUFFERS sleeps. */
    const double slack = 0.25 + NBUFFERS * sleep_ms / 1000.0;
    check(elapsed > expected - 0.1 && elapsed < expected + slack,
          "timing: %.3f s from STREAMON to frame %ld, expected %.3f s at %u fps", elapsed,
          last_seq, expected, fps);
    if (got > 1) {
        double interval = (last_ts - first_ts) / (last_seq - first_seq);
        check(interval > 0.95 / fps && interval < 1.05 / fps,
              "frame interval from timestamps: %.2f ms", interval * 1e3);
    }

    void (*counters)(unsigned long *, unsigned long *) = dlsym(RTLD_DEFAULT, "fakecam_counters");
    if (counters) {
        unsigned long delivered, dropped;
        counters(&delivered, &dropped);
        printf("  fakecam: %lu frames delivered, %lu dropped\n", delivered, dropped);
    }

    if (unplug_after) {
        /* The device must now disappear. The emulated camera sends nothing
         * more; a real one (unplugged by hand) may deliver a few more frames
         * first: take them until poll reports the error, for up to 10 s. */
        struct pollfd p = { .fd = fd, .events = POLLIN };
        struct v4l2_buffer b = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP };
        unsigned extra = 0;
        int n;
        const double deadline = now_s() + 10;
        while ((n = poll(&p, 1, 3000)) == 1 && p.revents == POLLIN && now_s() < deadline &&
               xioctl(io, fd, VIDIOC_DQBUF, &b) == 0) {
            extra++;
            xioctl(io, fd, VIDIOC_QBUF, &b);
        }
        check(n == 1 && (p.revents & POLLERR) && (p.revents & POLLHUP),
              "unplug: poll -> revents 0x%x (POLLERR|POLLHUP expected), %u more frames", p.revents,
              extra);
        rc = xioctl(io, fd, VIDIOC_DQBUF, &b);
        check(rc < 0 && errno == ENODEV, "unplug: DQBUF -> %s", rc < 0 ? strerror(errno) : "ok");
        rc = xioctl(io, fd, VIDIOC_STREAMOFF, &type);
        check(rc < 0 && errno == ENODEV, "unplug: STREAMOFF -> %s",
              rc < 0 ? strerror(errno) : "ok");
        /* A USB camera's node goes away (ENOENT); vivid's disconnect control
         * keeps the node but refuses opens (ENODEV). */
        int fd2 = io->open(dev_path, O_RDWR);
        check(fd2 < 0 && (errno == ENOENT || (!counters && errno == ENODEV)),
              "unplug: open again -> %s", fd2 < 0 ? strerror(errno) : "opened");
        rc = stat(dev_path, &st);
        if (counters)
            check(rc < 0 && errno == ENOENT, "unplug: stat -> %s", rc < 0 ? strerror(errno) : "ok");
        else
            printf("  unplug: stat -> %s\n", rc < 0 ? strerror(errno) : "ok (node still there)");
    } else {
        check(xioctl(io, fd, VIDIOC_STREAMOFF, &type) == 0, "STREAMOFF");
    }
    for (unsigned i = 0; i < req.count && i < 32; i++)
        io->munmap(mem[i], len[i]);
    if (!unplug_after) {
        req.count = 0;
        check(xioctl(io, fd, VIDIOC_REQBUFS, &req) == 0, "REQBUFS 0 (free buffers)");
    }
    check(io->close(fd) == 0, "close");
    free(half);
    close(other[0]);
    close(other[1]);
    printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
