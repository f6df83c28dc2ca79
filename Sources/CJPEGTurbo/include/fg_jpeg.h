// JPEG pictures from 4:2:0 Y'CbCr planes through libjpeg-turbo's raw-data interface (its SIMD DCT,
// quantisation and Huffman coding; no colour conversion, no downsampling): the live view's encoder.
// libjpeg reports errors by longjmp, which Swift cannot catch: this file catches them and returns -1
// with the message.
#ifndef FRAMEGRAPH_JPEG_H
#define FRAMEGRAPH_JPEG_H

#include <stddef.h>
#include <stdint.h>

/// One encoder: libjpeg's compressor, its output buffer and a band of padded rows, kept between
/// pictures. Not thread-safe: one encoding thread.
typedef struct fg_jpeg_encoder fg_jpeg_encoder;

/// A new encoder, or NULL when memory is short.
fg_jpeg_encoder *fg_jpeg_encoder_new(void);
/// Frees the encoder and its buffers (NULL is fine).
void fg_jpeg_encoder_free(fg_jpeg_encoder *encoder);

/// Encodes a width x height picture (both 1 … 65500) from three planes, Y at full size and Cb, Cr at
/// half size rounded up (4:2:0), rows `strides` bytes apart, each row read only up to its width.
/// `luma_map` and `chroma_map` (256 entries each, or NULL) map every sample on the way in (limited
/// range to the JPEG's full range in the same pass). Quality 1 … 100 as libjpeg's. On success returns
/// 0 and points `*out` at `*size` bytes owned by the encoder (valid until its next call); on failure
/// returns -1 with libjpeg's message in `error`.
int fg_jpeg_encode_420(fg_jpeg_encoder *encoder, const uint8_t *const planes[3], const int strides[3],
                       int width, int height, int quality, const uint8_t *luma_map, const uint8_t *chroma_map,
                       const uint8_t **out, size_t *size, char *error, size_t error_size);

#endif
