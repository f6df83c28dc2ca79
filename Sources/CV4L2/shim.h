// libv4l2 + libv4lconvert for Swift.
//
// Swift cannot call variadic C functions (v4l2_open, v4l2_ioctl) nor import function-like macros
// (VIDIOC_*, V4L2_PIX_FMT_* built with v4l2_fourcc), so each ioctl request FrameGraph uses has a
// static inline wrapper here, one per request, plus the constants as functions. Every wrapper
// returns what the C call returns (-1 with errno set on failure); errno is read by the Swift caller
// right after the call. Capture-type structs are filled in here so Swift never touches the unions.
#ifndef FRAMEGRAPH_CV4L2_SHIM_H
#define FRAMEGRAPH_CV4L2_SHIM_H
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/videodev2.h>
#include <libv4l2.h>
#include <libv4lconvert.h>

// MARK: pixel formats (fourcc codes)

/// V4L2_PIX_FMT_YUYV: packed 4:2:2, Y0 U Y1 V.
static inline uint32_t fg_v4l2_pix_fmt_yuyv(void) { return V4L2_PIX_FMT_YUYV; }
/// V4L2_PIX_FMT_MJPEG: Motion-JPEG, one JPEG image per buffer.
static inline uint32_t fg_v4l2_pix_fmt_mjpeg(void) { return V4L2_PIX_FMT_MJPEG; }
/// V4L2_PIX_FMT_JPEG: like MJPEG (some cameras name it so).
static inline uint32_t fg_v4l2_pix_fmt_jpeg(void) { return V4L2_PIX_FMT_JPEG; }
/// V4L2_PIX_FMT_YUV420 ("YU12"): planar Y, U, V, chroma at half width and height.
static inline uint32_t fg_v4l2_pix_fmt_yuv420(void) { return V4L2_PIX_FMT_YUV420; }
/// V4L2_PIX_FMT_RGB24 ("RGB3"): packed R, G, B.
static inline uint32_t fg_v4l2_pix_fmt_rgb24(void) { return V4L2_PIX_FMT_RGB24; }

// MARK: opening

/// v4l2_open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC): the descriptor is wrapped by libv4l2.
static inline int fg_v4l2_open(const char *path) {
    return v4l2_open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
}

/// VIDIOC_QUERYCAP through plain open/ioctl/close (not libv4l2, which prints complaints about
/// descriptors that are not V4L2 devices): 0 when `path` is a V4L2 device, else -1 with errno.
static inline int fg_probe_v4l2(const char *path) {
    int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct v4l2_capability cap;
    memset(&cap, 0, sizeof cap);
    int rc = ioctl(fd, VIDIOC_QUERYCAP, &cap);
    int saved = errno;
    close(fd);
    errno = saved;
    return rc;
}

/// v4l2_close.
static inline int fg_v4l2_close(int fd) { return v4l2_close(fd); }

// MARK: ioctl requests, one wrapper each

/// VIDIOC_QUERYCAP.
static inline int fg_vidioc_querycap(int fd, struct v4l2_capability *cap) {
    memset(cap, 0, sizeof *cap);
    return v4l2_ioctl(fd, VIDIOC_QUERYCAP, cap);
}

/// VIDIOC_ENUM_FMT for video capture: format `index`. Fills `fmt`.
static inline int fg_vidioc_enum_fmt(int fd, uint32_t index, struct v4l2_fmtdesc *fmt) {
    memset(fmt, 0, sizeof *fmt);
    fmt->index = index;
    fmt->type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    return v4l2_ioctl(fd, VIDIOC_ENUM_FMT, fmt);
}

/// VIDIOC_ENUM_FRAMESIZES: size `index` of `pixelformat`. Fills `size`.
static inline int fg_vidioc_enum_framesizes(int fd, uint32_t pixelformat, uint32_t index,
                                            struct v4l2_frmsizeenum *size) {
    memset(size, 0, sizeof *size);
    size->index = index;
    size->pixel_format = pixelformat;
    return v4l2_ioctl(fd, VIDIOC_ENUM_FRAMESIZES, size);
}

/// VIDIOC_ENUM_FRAMEINTERVALS: interval `index` of `pixelformat` at `width`x`height`.
static inline int fg_vidioc_enum_frameintervals(int fd, uint32_t pixelformat, uint32_t width,
                                                uint32_t height, uint32_t index,
                                                struct v4l2_frmivalenum *ival) {
    memset(ival, 0, sizeof *ival);
    ival->index = index;
    ival->pixel_format = pixelformat;
    ival->width = width;
    ival->height = height;
    return v4l2_ioctl(fd, VIDIOC_ENUM_FRAMEINTERVALS, ival);
}

/// VIDIOC_G_FMT for video capture: the current single-planar format into `pix`.
static inline int fg_vidioc_g_fmt(int fd, struct v4l2_pix_format *pix) {
    struct v4l2_format f;
    memset(&f, 0, sizeof f);
    f.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    int rc = v4l2_ioctl(fd, VIDIOC_G_FMT, &f);
    if (rc == 0)
        *pix = f.fmt.pix;
    return rc;
}

/// VIDIOC_S_FMT for video capture: asks for `pix` (width, height, pixelformat, field) and stores
/// what the driver granted back into it.
static inline int fg_vidioc_s_fmt(int fd, struct v4l2_pix_format *pix) {
    struct v4l2_format f;
    memset(&f, 0, sizeof f);
    f.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    f.fmt.pix = *pix;
    int rc = v4l2_ioctl(fd, VIDIOC_S_FMT, &f);
    if (rc == 0)
        *pix = f.fmt.pix;
    return rc;
}

/// VIDIOC_G_PARM for video capture: capability flags and the current time per frame.
static inline int fg_vidioc_g_parm(int fd, struct v4l2_captureparm *capture) {
    struct v4l2_streamparm p;
    memset(&p, 0, sizeof p);
    p.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    int rc = v4l2_ioctl(fd, VIDIOC_G_PARM, &p);
    if (rc == 0)
        *capture = p.parm.capture;
    return rc;
}

/// VIDIOC_S_PARM for video capture: asks for `numerator`/`denominator` seconds per frame and
/// stores the granted interval back.
static inline int fg_vidioc_s_parm(int fd, uint32_t *numerator, uint32_t *denominator) {
    struct v4l2_streamparm p;
    memset(&p, 0, sizeof p);
    p.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    p.parm.capture.timeperframe.numerator = *numerator;
    p.parm.capture.timeperframe.denominator = *denominator;
    int rc = v4l2_ioctl(fd, VIDIOC_S_PARM, &p);
    if (rc == 0) {
        *numerator = p.parm.capture.timeperframe.numerator;
        *denominator = p.parm.capture.timeperframe.denominator;
    }
    return rc;
}

/// VIDIOC_REQBUFS, memory-mapped capture buffers: asks for `*count` and stores the granted count.
static inline int fg_vidioc_reqbufs(int fd, uint32_t *count) {
    struct v4l2_requestbuffers r;
    memset(&r, 0, sizeof r);
    r.count = *count;
    r.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    r.memory = V4L2_MEMORY_MMAP;
    int rc = v4l2_ioctl(fd, VIDIOC_REQBUFS, &r);
    if (rc == 0)
        *count = r.count;
    return rc;
}

/// VIDIOC_QUERYBUF: length and mmap offset of buffer `index`.
static inline int fg_vidioc_querybuf(int fd, uint32_t index, uint32_t *length, int64_t *offset) {
    struct v4l2_buffer b;
    memset(&b, 0, sizeof b);
    b.index = index;
    b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    b.memory = V4L2_MEMORY_MMAP;
    int rc = v4l2_ioctl(fd, VIDIOC_QUERYBUF, &b);
    if (rc == 0) {
        *length = b.length;
        *offset = (int64_t)b.m.offset;
    }
    return rc;
}

/// VIDIOC_QBUF: gives buffer `index` back to the driver.
static inline int fg_vidioc_qbuf(int fd, uint32_t index) {
    struct v4l2_buffer b;
    memset(&b, 0, sizeof b);
    b.index = index;
    b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    b.memory = V4L2_MEMORY_MMAP;
    return v4l2_ioctl(fd, VIDIOC_QBUF, &b);
}

/// What VIDIOC_DQBUF says about a filled buffer.
struct fg_dequeued {
    uint32_t index;
    uint32_t bytesused;
    uint32_t sequence;
    uint32_t flags;
    int64_t timestamp_sec;
    int64_t timestamp_usec;
};

/// VIDIOC_DQBUF: takes a filled buffer (EAGAIN when none is ready on a non-blocking descriptor).
static inline int fg_vidioc_dqbuf(int fd, struct fg_dequeued *out) {
    struct v4l2_buffer b;
    memset(&b, 0, sizeof b);
    b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    b.memory = V4L2_MEMORY_MMAP;
    int rc = v4l2_ioctl(fd, VIDIOC_DQBUF, &b);
    if (rc == 0) {
        out->index = b.index;
        out->bytesused = b.bytesused;
        out->sequence = b.sequence;
        out->flags = b.flags;
        out->timestamp_sec = (int64_t)b.timestamp.tv_sec;
        out->timestamp_usec = (int64_t)b.timestamp.tv_usec;
    }
    return rc;
}

/// VIDIOC_STREAMON for video capture.
static inline int fg_vidioc_streamon(int fd) {
    int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    return v4l2_ioctl(fd, VIDIOC_STREAMON, &type);
}

/// VIDIOC_STREAMOFF for video capture.
static inline int fg_vidioc_streamoff(int fd) {
    int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    return v4l2_ioctl(fd, VIDIOC_STREAMOFF, &type);
}

// MARK: memory mapping

/// v4l2_mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, offset); NULL on failure
/// (instead of MAP_FAILED).
static inline void *fg_v4l2_mmap(int fd, uint32_t length, int64_t offset) {
    void *p = v4l2_mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, offset);
    return p == MAP_FAILED ? NULL : p;
}

/// v4l2_munmap.
static inline int fg_v4l2_munmap(void *p, uint32_t length) { return v4l2_munmap(p, length); }

// MARK: waiting

/// poll() on one descriptor for input; returns poll's result and the events in *revents.
static inline int fg_poll_in(int fd, int timeout_ms, short *revents) {
    struct pollfd p = { .fd = fd, .events = POLLIN, .revents = 0 };
    int rc = poll(&p, 1, timeout_ms);
    *revents = p.revents;
    return rc;
}
static inline short fg_pollin(void) { return POLLIN; }
static inline short fg_pollerr(void) { return POLLERR; }
static inline short fg_pollhup(void) { return POLLHUP; }
static inline short fg_pollnval(void) { return POLLNVAL; }

// MARK: conversion (libv4lconvert)

/// Converts one frame of `src_pixfmt` (src_bytes bytes) at width x height into `dst_pixfmt`
/// (YUV420 or RGB24, tightly packed rows) in `dst`. Returns bytes written, -1 on error
/// (fg_v4lconvert_error tells why).
static inline int fg_v4lconvert(struct v4lconvert_data *data, uint32_t src_pixfmt,
                                uint32_t src_bytesperline, uint32_t src_sizeimage,
                                uint32_t width, uint32_t height,
                                const uint8_t *src, uint32_t src_bytes,
                                uint32_t dst_pixfmt, uint8_t *dst, uint32_t dst_capacity) {
    struct v4l2_format s, d;
    memset(&s, 0, sizeof s);
    memset(&d, 0, sizeof d);
    s.type = d.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    s.fmt.pix.width = d.fmt.pix.width = width;
    s.fmt.pix.height = d.fmt.pix.height = height;
    s.fmt.pix.field = d.fmt.pix.field = V4L2_FIELD_NONE;
    s.fmt.pix.pixelformat = src_pixfmt;
    s.fmt.pix.bytesperline = src_bytesperline;
    s.fmt.pix.sizeimage = src_sizeimage;
    d.fmt.pix.pixelformat = dst_pixfmt;
    d.fmt.pix.bytesperline = dst_pixfmt == V4L2_PIX_FMT_RGB24 ? width * 3 : width;
    d.fmt.pix.sizeimage = dst_pixfmt == V4L2_PIX_FMT_RGB24 ? width * height * 3
                                                           : width * height * 3 / 2;
    return v4lconvert_convert(data, &s, &d, (unsigned char *)src, (int)src_bytes, dst,
                              (int)dst_capacity);
}

/// The last conversion error of `data`, as text.
static inline const char *fg_v4lconvert_error(struct v4lconvert_data *data) {
    return v4lconvert_get_error_message(data);
}

// MARK: buffer flags

/// Mask of the timestamp-type bits of v4l2_buffer.flags.
static inline uint32_t fg_v4l2_buf_flag_timestamp_mask(void) { return V4L2_BUF_FLAG_TIMESTAMP_MASK; }
/// Timestamp type: CLOCK_MONOTONIC.
static inline uint32_t fg_v4l2_buf_flag_timestamp_monotonic(void) { return V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC; }
/// The buffer's data is damaged (the driver says so).
static inline uint32_t fg_v4l2_buf_flag_error(void) { return V4L2_BUF_FLAG_ERROR; }

#endif
