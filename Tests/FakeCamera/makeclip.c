/*
 * makeclip.c - writes a raw YUYV clip of the stamped test pattern.
 *
 *   makeclip WIDTHxHEIGHT FRAMES > clip.yuv
 *
 * FRAMES 0 writes for ever (to feed a pipe, e.g. ffmpeg -re -i -).
 * Frame i carries stamp i (see fakecam_pattern.h). Use it as FAKECAM_CLIP, or
 * feed it to a v4l2loopback device to run check against a real kernel device.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fakecam_pattern.h"

int main(int argc, char **argv)
{
    unsigned width, height;
    if (argc != 3 || sscanf(argv[1], "%ux%u", &width, &height) != 2 || width % 2) {
        fprintf(stderr, "usage: makeclip WIDTHxHEIGHT FRAMES > clip.yuv\n");
        return 2;
    }
    unsigned frames = (unsigned)atoi(argv[2]);
    size_t size = (size_t)width * height * 2;
    uint8_t *frame = malloc(size);
    if (!frame)
        return 1;
    for (unsigned i = 0; frames == 0 || i < frames; i++) {
        fakecam_pattern_yuyv(frame, (int)width, (int)height, (size_t)width * 2, i);
        fakecam_stamp_yuyv(frame, (int)width, (int)height, (size_t)width * 2, i);
        if (fwrite(frame, 1, size, stdout) != size) {
            perror("makeclip");
            return 1;
        }
    }
    free(frame);
    return 0;
}
