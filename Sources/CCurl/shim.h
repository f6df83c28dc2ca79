// libcurl (Debian's libcurl4-openssl-dev): HTTP(S) downloads of deployed models. curl_easy_setopt
// is variadic, so Swift calls it through CModelDeployment's typed wrapper (fg_http_get).
#ifndef FRAMEGRAPH_CCURL_SHIM_H
#define FRAMEGRAPH_CCURL_SHIM_H
#include <curl/curl.h>
#endif
