/*
 * fakecam_jpeg.c - YUYV to JPEG with libjpeg(-turbo).
 */
#include "fakecam_jpeg.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

/* libjpeg reports errors through error_exit, which must not return: jump
 * back to the encoder instead of letting the default handler exit(). */
struct error_mgr {
    struct jpeg_error_mgr pub;
    jmp_buf escape;
};

static void on_error(j_common_ptr cinfo)
{
    struct error_mgr *err = (struct error_mgr *)cinfo->err;
    (*cinfo->err->output_message)(cinfo);
    longjmp(err->escape, 1);
}

size_t fakecam_jpeg_encode_yuyv(const uint8_t *yuyv, int width, int height, size_t stride,
                                int quality, uint8_t *dst, size_t cap)
{
    struct jpeg_compress_struct cinfo;
    struct error_mgr err;
    /* jpeg_mem_dest writes into dst and switches to a buffer of its own
     * (which we must free) only when dst is too small. */
    unsigned char *out = dst;
    unsigned long out_size = cap;
    JSAMPLE *row = malloc((size_t)width * 3);
    volatile size_t result = 0;

    if (!row)
        return 0;
    cinfo.err = jpeg_std_error(&err.pub);
    err.pub.error_exit = on_error;
    if (setjmp(err.escape)) {
        jpeg_destroy_compress(&cinfo);
        goto done;
    }
    jpeg_create_compress(&cinfo);
    jpeg_mem_dest(&cinfo, &out, &out_size);

    cinfo.image_width = (JDIMENSION)width;
    cinfo.image_height = (JDIMENSION)height;
    cinfo.input_components = 3;
    cinfo.in_color_space = JCS_YCbCr; /* no colour conversion: we feed Y, Cb, Cr */
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, quality, TRUE);
    /* 4:2:2 sampling like most UVC cameras: chroma halved horizontally. */
    cinfo.comp_info[0].h_samp_factor = 2;
    cinfo.comp_info[0].v_samp_factor = 1;
    cinfo.comp_info[1].h_samp_factor = cinfo.comp_info[2].h_samp_factor = 1;
    cinfo.comp_info[1].v_samp_factor = cinfo.comp_info[2].v_samp_factor = 1;
    jpeg_start_compress(&cinfo, TRUE);

    while (cinfo.next_scanline < cinfo.image_height) {
        const uint8_t *src = yuyv + (size_t)cinfo.next_scanline * stride;
        for (int x = 0; x + 1 < width; x += 2, src += 4) {
            JSAMPLE *p = row + 3 * x; /* Y0 U Y1 V -> (Y0 U V) (Y1 U V) */
            p[0] = src[0]; p[1] = src[1]; p[2] = src[3];
            p[3] = src[2]; p[4] = src[1]; p[5] = src[3];
        }
        JSAMPROW rows[1] = { row };
        jpeg_write_scanlines(&cinfo, rows, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    result = out == dst ? (size_t)out_size : 0; /* 0: it did not fit */

done:
    if (out != dst)
        free(out);
    free(row);
    return result;
}
