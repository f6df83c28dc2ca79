// The live view's JPEG, two ways, on one decoded 640x480 limited-range frame: FFmpeg's MJPEG encoder
// after a separate range-stretch pass (what --serve did before: JPEGStreamEncoder in FFmpegSupport,
// -q:v 5, standard Huffman tables) against libjpeg-turbo's raw-data path with the stretch fused
// into its row copy (Sources/CJPEGTurbo, quality 75). Interleaved A B A B …; prints the median time
// of each and the picture sizes. Built and run by jpeg_encoders.sh.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <libavcodec/avcodec.h>
#include <libavutil/frame.h>
#include "fg_jpeg.h"

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
static double median(double *v, int n) { qsort(v, n, sizeof *v, cmp); return v[n / 2]; }

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: jpeg_encoders FRAME.yuv WIDTH HEIGHT [ROUNDS] [PER_ROUND]\n"); return 2; }
    int W = atoi(argv[2]), H = atoi(argv[3]), rounds = argc > 4 ? atoi(argv[4]) : 9, per = argc > 5 ? atoi(argv[5]) : 100;
    size_t n = (size_t)W * H * 3 / 2;
    uint8_t *yuv = malloc(n);
    FILE *f = fopen(argv[1], "rb");
    if (!f || fread(yuv, 1, n, f) != n) { fprintf(stderr, "cannot read %s\n", argv[1]); return 2; }
    fclose(f);
    uint8_t lm[256], cm[256];
    for (int i = 0; i < 256; i++) {
        double l = (i - 16) * 255.0 / 219, c = (i - 128) * 255.0 / 224 + 128;
        lm[i] = l < 0 ? 0 : l > 255 ? 255 : (uint8_t)(l + 0.5);
        cm[i] = c < 0 ? 0 : c > 255 ? 255 : (uint8_t)(c + 0.5);
    }
    const uint8_t *planes[3] = {yuv, yuv + W * H, yuv + W * H + W * H / 4};
    int strides[3] = {W, W / 2, W / 2};
    // A: FFmpeg's MJPEG encoder kept open, fed by a table pass into its picture.
    const AVCodec *codec = avcodec_find_encoder(AV_CODEC_ID_MJPEG);
    AVCodecContext *cc = avcodec_alloc_context3(codec);
    cc->width = W; cc->height = H; cc->pix_fmt = AV_PIX_FMT_YUVJ420P; cc->time_base = (AVRational){1, 25};
    cc->flags |= AV_CODEC_FLAG_QSCALE; cc->global_quality = 5 * FF_QP2LAMBDA; cc->color_range = AVCOL_RANGE_JPEG;
    AVDictionary *d = NULL;
    av_dict_set(&d, "huffman", "default", 0);
    if (avcodec_open2(cc, codec, &d) < 0) { fprintf(stderr, "cannot open FFmpeg's MJPEG encoder\n"); return 1; }
    AVFrame *pic = av_frame_alloc();
    pic->format = AV_PIX_FMT_YUVJ420P; pic->width = W; pic->height = H;
    av_frame_get_buffer(pic, 0);
    AVPacket *pkt = av_packet_alloc();
    size_t sizeA = 0, sizeB = 0;
    // B: the project's encoder.
    fg_jpeg_encoder *e = fg_jpeg_encoder_new();
    double *a = malloc(sizeof(double) * rounds), *b = malloc(sizeof(double) * rounds);
    for (int r = 0; r < rounds; r++) {
        double t = now();
        for (int i = 0; i < per; i++) {
            av_frame_make_writable(pic);
            for (int p = 0; p < 3; p++) {
                int w = p ? W / 2 : W, h = p ? H / 2 : H;
                const uint8_t *map = p ? cm : lm;
                for (int y = 0; y < h; y++) {
                    const uint8_t *s = planes[p] + (size_t)y * strides[p];
                    uint8_t *o = pic->data[p] + (size_t)y * pic->linesize[p];
                    for (int x = 0; x < w; x++) o[x] = map[s[x]];
                }
            }
            pic->quality = cc->global_quality;
            avcodec_send_frame(cc, pic);
            avcodec_receive_packet(cc, pkt);
            sizeA = pkt->size;
            av_packet_unref(pkt);
        }
        a[r] = (now() - t) / per * 1000;
        t = now();
        for (int i = 0; i < per; i++) {
            const uint8_t *out; char err[200];
            if (fg_jpeg_encode_420(e, planes, strides, W, H, 75, lm, cm, &out, &sizeB, err, sizeof err)) { fprintf(stderr, "%s\n", err); return 1; }
        }
        b[r] = (now() - t) / per * 1000;
        printf("round %d: FFmpeg MJPEG + stretch %.3f ms, libjpeg-turbo planes %.3f ms\n", r + 1, a[r], b[r]);
    }
    double ma = median(a, rounds), mb = median(b, rounds);
    printf("median per %dx%d picture: FFmpeg MJPEG (-q:v 5) + stretch %.3f ms (%zu bytes), libjpeg-turbo (quality 75) %.3f ms (%zu bytes): %.2fx\n",
           W, H, ma, sizeA, mb, sizeB, ma / mb);
    fg_jpeg_encoder_free(e);
    av_packet_free(&pkt); av_frame_free(&pic); avcodec_free_context(&cc);
    return 0;
}
