// FrameGraph's own C kernels: arithmetic loops that benefit from AVX2/FMA, compiled twice (baseline
// x86-64 and AVX2+FMA) and chosen at run time by the CPU. Swift calls them through thin wrappers in
// FrameGraphFilters (LabRows); they touch only the arrays they are given.
#ifndef FRAMEGRAPH_KERNELS_H
#define FRAMEGRAPH_KERNELS_H
#include <stddef.h>

/// Lab (scikit-image convention) of n pixels given as linear-light R, G, B rows.
/// m: the 3×3 matrix XYZ/white = m · rgb, row-major.
void fg_lab_from_linear(const float *r, const float *g, const float *b, float *l, float *a, float *bb,
                        size_t n, const float m[9]);

/// Lightness alone of n pixels given as linear-light R, G, B rows (m: the matrix's second row).
void fg_lightness_from_linear(const float *r, const float *g, const float *b, float *l, size_t n, const float m[3]);

/// For n Lab pixels: linear-light R, G, B clipped to 0…1, times `scale`, plus 0.5 (ready to truncate
/// into a table index). inv: the 3×3 matrix rgb = inv · XYZ/white, row-major.
void fg_linear_index_from_lab(const float *l, const float *a, const float *bb, float *r, float *g, float *b,
                              size_t n, const float inv[9], float scale);
#endif
