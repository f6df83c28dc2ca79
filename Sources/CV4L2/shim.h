// libv4l2 for Swift. (The camera helper fills in the ioctl wrappers.)
#ifndef FRAMEGRAPH_CV4L2_SHIM_H
#define FRAMEGRAPH_CV4L2_SHIM_H
#include <linux/videodev2.h>
#include <libv4l2.h>
#endif
