// One 1×1 convolution (no activation), XNNPACK's operator against FrameGraph's fg_pointwise_conv on
// the same data, alternated 51 times; prints the medians, their ratio and the largest difference.
// A fourth argument `cold` reads 8 MB of other data before each call, so the weights and the input
// come from L3 as in a network whose weights do not fit in L2 (each layer's once per prediction);
// `dram` reads 64 MB, so they come from memory, as in a network whose weights and activations
// (EfficientNet-Lite0: 19 MB of weights) outgrow this VM's share of L3.
//   tools/bench/pointwise_vs_xnnpack.sh      (builds this with the toolchain's clang and runs the cases)
#include <xnnpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <time.h>
#include "fg_kernels.h"
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int argc,char**argv){
  int H=atoi(argv[1]),K=atoi(argv[2]),N=atoi(argv[3]);
  int cold=argc>4&&(argv[4][0]=='c'||argv[4][0]=='d');
  size_t evict_n=(argc>4&&argv[4][0]=='d'?64u:8u)<<20; volatile unsigned char*evict=malloc(evict_n); for(size_t i=0;i<evict_n;i++)evict[i]=(unsigned char)i;
  unsigned sink=0;
  size_t M=(size_t)H*H;
  float*in=aligned_alloc(64,M*K*4+64),*w=malloc(N*K*4),*b=malloc(N*4),*o1=aligned_alloc(64,M*N*4+64),*o2=aligned_alloc(64,M*N*4+64);
  for(size_t i=0;i<M*K;i++)in[i]=(rand()%1000)/500.0-1;
  for(int i=0;i<N*K;i++)w[i]=(rand()%1000)/5000.0-0.1;
  for(int i=0;i<N;i++)b[i]=(rand()%100)/100.0;
  xnn_initialize(NULL);
  xnn_operator_t op=NULL;
  if(xnn_create_convolution2d_nhwc_f32(0,0,0,0,1,1,1,1,1,1,1,K,N,K,N,w,b,-INFINITY,INFINITY,0,&op)) {puts("create");return 1;}
  if(xnn_setup_convolution2d_nhwc_f32(op,1,H,H,in,o1,NULL)){puts("setup");return 1;}
  float*packed=aligned_alloc(64,fg_conv_packed_count(K,N)*4+64);
  fg_conv_pack(w,b,K,N,packed);
  fg_conv_epilogue e={-INFINITY,INFINITY,NULL,0,0,-INFINITY,INFINITY,NULL,0};
  double tx[51],tf[51];
  for(int r=0;r<51;r++){
    if(cold) for(size_t i=0;i<evict_n;i+=64) sink+=evict[i];
    double t0=now(); xnn_run_operator(op,NULL); double t1=now();
    if(cold) for(size_t i=0;i<evict_n;i+=64) sink+=evict[i];
    double t2=now(); fg_pointwise_conv(in,M,K,packed,N,o2,&e,1); double t3=now();
    tx[r]=t1-t0; tf[r]=t3-t2;
  }
  qsort(tx,51,8,cmp);qsort(tf,51,8,cmp);
  double md=0; for(size_t i=0;i<M*N;i++){double d=fabs(o1[i]-o2[i]); if(d>md)md=d;}
  if(sink==1)puts("");
  printf("%s %dx%d K=%d N=%d  xnnpack %.1f us  own %.1f us  ratio %.2f  maxdiff %g  GFLOP/s own %.1f\n",cold?argv[4]:"",H,H,K,N,tx[25]*1e6,tf[25]*1e6,tf[25]/tx[25],md, 2.0*M*K*N/tf[25]/1e9);
}
