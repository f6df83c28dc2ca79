// fg_area_resize of one 8-bit plane to 256×256, an earlier build of resample.c (renamed old_*, made by
// tools/bench/area_resize_ab.sh from git) against the current one, alternated 101 times; prints the
// medians, their ratio and how many values differ.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "fg_kernels.h"
void old_area_resize(const unsigned char *src, ptrdiff_t ss, int sw, int sh, int channels, float *dst, int dw, int dh,
                    const int *xs, const int *xc, const float *xw, int xmax, const int *ys, const int *yc, const float *yw, int ymax, float *acc);
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int argc,char**argv){
  int sw=atoi(argv[1]),sh=atoi(argv[2]),dw=256,dh=256;
  unsigned char*src=malloc(sw*sh); for(int i=0;i<sw*sh;i++)src[i]=rand();
  int xm=sw/dw+3, ym=sh/dh+3;
  int*xs=malloc(dw*4),*xc=malloc(dw*4),*ys=malloc(dh*4),*yc=malloc(dh*4); float*xw=calloc(dw*xm,4),*yw=calloc(dh*ym,4);
  fg_area_taps(xs,xc,xw,xm,dw,sw); fg_area_taps(ys,yc,yw,ym,dh,sh);
  size_t pb=fg_area_plan_bytes(dw,xs,xc); void*plan=pb?aligned_alloc(64,(pb+63)/64*64):NULL; if(plan) fg_area_plan_make(dw,xs,xc,xw,xm,plan);
  float*a=malloc(dw*dh*4),*b=malloc(dw*dh*4),*acc=malloc(sw*12);
  double to[101],tn[101];
  for(int r=0;r<101;r++){double t0=now(); old_area_resize(src,sw,sw,sh,1,a,dw,dh,xs,xc,xw,xm,ys,yc,yw,ym,acc); double t1=now();
    fg_area_resize(src,sw,sw,sh,1,b,dw,dh,xs,xc,xw,xm,plan,pb,ys,yc,yw,ym,acc); double t2=now(); to[r]=t1-t0; tn[r]=t2-t1;}
  int diff=0; for(int i=0;i<dw*dh;i++) diff+=a[i]!=b[i];
  qsort(to,101,8,cmp);qsort(tn,101,8,cmp);
  printf("%dx%d plane → 256x256: old %.1f us new %.1f us ratio %.2f, %d values differ\n",sw,sh,to[50]*1e6,tn[50]*1e6,tn[50]/to[50],diff);
}
