/*
 * fakecam_pattern.c - draws and decodes the test pattern (see fakecam_pattern.h).
 */
#include "fakecam_pattern.h"

#define Y_BLACK 16
#define Y_WHITE 235

void fakecam_pattern_yuyv(uint8_t *yuyv, int width, int height, size_t stride, uint32_t n)
{
    for (int y = 0; y < height; y++) {
        uint8_t *row = yuyv + (size_t)y * stride;
        /* Chroma: U follows the row, V the column, both within 16..240. */
        uint8_t u = (uint8_t)(16 + (y * 224) / (height > 1 ? height : 1));
        for (int x = 0; x + 1 < width; x += 2) {
            uint8_t v = (uint8_t)(16 + (x * 224) / width);
            /* A diagonal ramp over 256 pixels, moving 4 pixels per frame. */
            unsigned phase = (unsigned)(x + y) + 4u * n;
            row[2 * x + 0] = (uint8_t)(Y_BLACK + ((phase & 255u) * 219u) / 255u);
            row[2 * x + 1] = u;
            row[2 * x + 2] = (uint8_t)(Y_BLACK + (((phase + 1) & 255u) * 219u) / 255u);
            row[2 * x + 3] = v;
        }
    }
}

/* Bit i (0 = leftmost cell) of the stamp for frame number n. */
static int stamp_bit(uint32_t n, int i)
{
    n &= FAKECAM_STAMP_MASK;
    if (i < FAKECAM_STAMP_BITS)
        return (n >> (FAKECAM_STAMP_BITS - 1 - i)) & 1;
    uint32_t check = ~n & 0xFFu;
    return (check >> (FAKECAM_STAMP_CELLS - 1 - i)) & 1;
}

void fakecam_stamp_yuyv(uint8_t *yuyv, int width, int height, size_t stride, uint32_t n)
{
    int c = fakecam_stamp_cell(width);
    if (c < 2 || c > height)
        return;
    for (int y = 0; y < c; y++) {
        uint8_t *row = yuyv + (size_t)y * stride;
        for (int x = 0; x < c * FAKECAM_STAMP_CELLS; x++) {
            row[2 * x] = stamp_bit(n, x / c) ? Y_WHITE : Y_BLACK;
            row[2 * x + 1] = 128; /* U or V: neutral */
        }
    }
}

int fakecam_decode(const uint8_t *pixels, int width, int height, size_t stride,
                   size_t step, uint32_t *n)
{
    int c = fakecam_stamp_cell(width);
    if (c < 2 || c > height)
        return -1;
    int lo = c / 4, hi = c / 4 + (c + 1) / 2; /* the central c/2 x c/2 square */
    uint32_t bits = 0;
    for (int i = 0; i < FAKECAM_STAMP_CELLS; i++) {
        unsigned sum = 0, count = 0;
        for (int y = lo; y < hi; y++)
            for (int x = i * c + lo; x < i * c + hi; x++) {
                sum += pixels[(size_t)y * stride + (size_t)x * step];
                count++;
            }
        bits = (bits << 1) | (sum > 128u * count);
    }
    uint32_t value = bits >> 8, check = bits & 0xFFu;
    if (check != (~value & 0xFFu))
        return -1;
    *n = value;
    return 0;
}
