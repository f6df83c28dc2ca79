#include "fg_jpeg.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include <jerror.h>

struct fg_jpeg_encoder {
    struct jpeg_compress_struct cinfo;
    struct {
        struct jpeg_error_mgr base;
        jmp_buf jump;
        char message[JMSG_LENGTH_MAX];
    } err;
    struct jpeg_destination_mgr dest;
    uint8_t *out;          /* the picture being written */
    size_t out_capacity;
    int out_failed;        /* the output buffer could not grow */
    uint8_t *band;         /* 16 luma rows and 8 rows of each chroma plane, padded to whole blocks */
    size_t band_capacity;
};

static void fail_exit(j_common_ptr cinfo) {
    fg_jpeg_encoder *e = (fg_jpeg_encoder *)cinfo;  /* cinfo is the first member */
    (*cinfo->err->format_message)(cinfo, e->err.message);
    longjmp(e->err.jump, 1);
}

static void quiet(j_common_ptr cinfo) { (void)cinfo; }

/* Output into one growing buffer kept between pictures. */
static void dest_init(j_compress_ptr cinfo) {
    fg_jpeg_encoder *e = (fg_jpeg_encoder *)cinfo;
    e->dest.next_output_byte = e->out;
    e->dest.free_in_buffer = e->out_capacity;
}

static boolean dest_grow(j_compress_ptr cinfo) {
    fg_jpeg_encoder *e = (fg_jpeg_encoder *)cinfo;
    size_t used = e->out_capacity;  /* libjpeg calls this only when the buffer is full */
    size_t capacity = e->out_capacity * 2;
    uint8_t *grown = realloc(e->out, capacity);
    if (grown == NULL) {
        e->out_failed = 1;
        ERREXIT(cinfo, JERR_OUT_OF_MEMORY);
    }
    e->out = grown;
    e->out_capacity = capacity;
    e->dest.next_output_byte = grown + used;
    e->dest.free_in_buffer = capacity - used;
    return TRUE;
}

static void dest_term(j_compress_ptr cinfo) { (void)cinfo; }

fg_jpeg_encoder *fg_jpeg_encoder_new(void) {
    fg_jpeg_encoder *e = calloc(1, sizeof *e);
    if (e == NULL) return NULL;
    e->out_capacity = 64 * 1024;
    e->out = malloc(e->out_capacity);
    if (e->out == NULL) {
        free(e);
        return NULL;
    }
    e->cinfo.err = jpeg_std_error(&e->err.base);
    e->err.base.error_exit = fail_exit;
    e->err.base.output_message = quiet;
    if (setjmp(e->err.jump)) {
        free(e->out);
        free(e);
        return NULL;
    }
    jpeg_create_compress(&e->cinfo);
    e->dest.init_destination = dest_init;
    e->dest.empty_output_buffer = dest_grow;
    e->dest.term_destination = dest_term;
    e->cinfo.dest = &e->dest;
    return e;
}

void fg_jpeg_encoder_free(fg_jpeg_encoder *e) {
    if (e == NULL) return;
    jpeg_destroy_compress(&e->cinfo);
    free(e->out);
    free(e->band);
    free(e);
}

/* Row `y` (clamped to the picture) of a plane, `width` samples mapped through `map` (or copied),
   padded to `padded` by repeating the last sample. */
static void fill_row(uint8_t *dst, const uint8_t *plane, int stride, int y, int rows, int width, int padded,
                     const uint8_t *map) {
    if (y >= rows) y = rows - 1;
    const uint8_t *src = plane + (size_t)y * (size_t)stride;
    if (map != NULL) {
        for (int x = 0; x < width; x++) dst[x] = map[src[x]];
    } else {
        memcpy(dst, src, (size_t)width);
    }
    memset(dst + width, dst[width - 1], (size_t)(padded - width));
}

int fg_jpeg_encode_420(fg_jpeg_encoder *e, const uint8_t *const planes[3], const int strides[3],
                       int width, int height, int quality, const uint8_t *luma_map, const uint8_t *chroma_map,
                       const uint8_t **out, size_t *size, char *error, size_t error_size) {
    if (width < 1 || height < 1 || width > 65500 || height > 65500 || planes[0] == NULL || planes[1] == NULL || planes[2] == NULL) {
        snprintf(error, error_size, "a %dx%d picture cannot be a JPEG", width, height);
        return -1;
    }
    const int cw = (width + 1) / 2, ch = (height + 1) / 2;
    const int lumaPadded = (width + 15) & ~15, chromaPadded = lumaPadded / 2;
    const size_t band = (size_t)lumaPadded * 16 + (size_t)chromaPadded * 16;
    if (band > e->band_capacity) {
        uint8_t *grown = realloc(e->band, band);
        if (grown == NULL) {
            snprintf(error, error_size, "out of memory for a %dx%d picture", width, height);
            return -1;
        }
        e->band = grown;
        e->band_capacity = band;
    }
    e->out_failed = 0;
    j_compress_ptr c = &e->cinfo;
    if (setjmp(e->err.jump)) {
        jpeg_abort_compress(c);
        snprintf(error, error_size, "%s", e->err.message);
        return -1;
    }
    c->image_width = (JDIMENSION)width;
    c->image_height = (JDIMENSION)height;
    c->input_components = 3;
    c->in_color_space = JCS_YCbCr;
    jpeg_set_defaults(c);
    jpeg_set_quality(c, quality < 1 ? 1 : quality > 100 ? 100 : quality, TRUE);
    c->raw_data_in = TRUE;
    c->dct_method = JDCT_ISLOW;
    c->comp_info[0].h_samp_factor = 2;
    c->comp_info[0].v_samp_factor = 2;
    c->comp_info[1].h_samp_factor = 1;
    c->comp_info[1].v_samp_factor = 1;
    c->comp_info[2].h_samp_factor = 1;
    c->comp_info[2].v_samp_factor = 1;
    jpeg_start_compress(c, TRUE);

    JSAMPROW yRows[16], cbRows[8], crRows[8];
    JSAMPARRAY bandRows[3] = {yRows, cbRows, crRows};
    uint8_t *luma = e->band, *cb = luma + (size_t)lumaPadded * 16, *cr = cb + (size_t)chromaPadded * 8;
    for (int i = 0; i < 16; i++) yRows[i] = luma + (size_t)i * lumaPadded;
    for (int i = 0; i < 8; i++) {
        cbRows[i] = cb + (size_t)i * chromaPadded;
        crRows[i] = cr + (size_t)i * chromaPadded;
    }
    for (int top = 0; top < height; top += 16) {
        for (int i = 0; i < 16; i++) fill_row(yRows[i], planes[0], strides[0], top + i, height, width, lumaPadded, luma_map);
        for (int i = 0; i < 8; i++) {
            fill_row(cbRows[i], planes[1], strides[1], top / 2 + i, ch, cw, chromaPadded, chroma_map);
            fill_row(crRows[i], planes[2], strides[2], top / 2 + i, ch, cw, chromaPadded, chroma_map);
        }
        jpeg_write_raw_data(c, bandRows, 16);
    }
    jpeg_finish_compress(c);
    *out = e->out;
    *size = e->out_capacity - e->dest.free_in_buffer;
    return 0;
}
