/*
 * fakecam_pattern.h - test pattern of the emulated camera, and its decoder.
 *
 * Every frame carries its sequence number as a row of big black/white cells
 * ("the stamp") across the top of the picture. The layout depends only on
 * the frame width, so it survives YUYV->RGB/YUV420 conversion, MJPEG
 * compression and scaling by 1/2:
 *
 *   cell size  c = width / 32 pixels (integer division); cells are c x c
 *   cell i     covers x in [i*c, (i+1)*c), y in [0, c), for i = 0..31
 *   cells 0-23 the 24-bit frame number n, most significant bit first
 *   cells 24-31 the check byte (~n) & 0xFF, most significant bit first
 *   colour     bit 1 = white (Y 235, RGB 255), bit 0 = black (Y 16, RGB 0),
 *              chroma neutral (U = V = 128)
 *   decoding   average the luma (or any RGB channel) over the central
 *              c/2 x c/2 square of each cell; > 128 means 1. Accept the
 *              frame only when the check byte matches.
 *
 * The frame number is v4l2_buffer.sequence of the buffer that carried the
 * frame (modulo 2^24), so a test can verify order and detect drops from the
 * pixels alone. At 640x480 a cell is 20x20 pixels (10x10 after scaling by 1/2).
 *
 * Below the stamp the pattern is a diagonal luma gradient that moves 4 pixels
 * per frame, with chroma varying across the picture.
 */
#ifndef FAKECAM_PATTERN_H
#define FAKECAM_PATTERN_H

#include <stddef.h>
#include <stdint.h>

#define FAKECAM_STAMP_CELLS 32 /* cells across the width */
#define FAKECAM_STAMP_BITS 24  /* bits of the frame number */
#define FAKECAM_STAMP_MASK 0xFFFFFFu

/* Cell edge in pixels for a frame of the given width (0 if too narrow). */
static inline int fakecam_stamp_cell(int width) { return width / FAKECAM_STAMP_CELLS; }

/* Fills a packed YUYV frame (stride bytes per row) with the moving gradient
 * for frame n. Does not draw the stamp. */
void fakecam_pattern_yuyv(uint8_t *yuyv, int width, int height, size_t stride, uint32_t n);

/* Draws the stamp for frame number n over a packed YUYV frame. */
void fakecam_stamp_yuyv(uint8_t *yuyv, int width, int height, size_t stride, uint32_t n);

/* Decodes the stamp from any 8-bit interleaved picture: the luma-like sample of
 * pixel (x, y) is pixels[y * stride + x * step]. For RGB24 pass step 3 (the
 * red channel; the stamp is grey so any channel works), for packed YUYV step 2.
 * Returns 0 and stores the frame number in *n, or -1 if the check byte does
 * not match (no stamp, or a damaged one). */
int fakecam_decode(const uint8_t *pixels, int width, int height, size_t stride,
                   size_t step, uint32_t *n);

/* Convenience wrappers. */
static inline int fakecam_decode_rgb24(const uint8_t *rgb, int width, int height,
                                       size_t stride, uint32_t *n)
{
    return fakecam_decode(rgb, width, height, stride, 3, n);
}

static inline int fakecam_decode_yuyv(const uint8_t *yuyv, int width, int height,
                                      size_t stride, uint32_t *n)
{
    return fakecam_decode(yuyv, width, height, stride, 2, n);
}

#endif
