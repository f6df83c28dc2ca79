/*
 * fakecam_jpeg.h - YUYV to baseline JPEG (4:2:2), as a UVC MJPEG camera sends.
 */
#ifndef FAKECAM_JPEG_H
#define FAKECAM_JPEG_H

#include <stddef.h>
#include <stdint.h>

/* Compresses a packed YUYV frame into dst (capacity cap bytes). Returns the
 * size of the JPEG image, or 0 if it failed or did not fit. */
size_t fakecam_jpeg_encode_yuyv(const uint8_t *yuyv, int width, int height, size_t stride,
                                int quality, uint8_t *dst, size_t cap);

#endif
