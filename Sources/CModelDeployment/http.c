// libcurl wrapper (fg_deploy.h): one blocking GET with TLS verification always on, an optional CA
// file, a bearer token, Range resumption, timeouts, a size cap and progress.
#include "fg_deploy.h"
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static void global_init(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

typedef struct {
    fg_http_write_fn write;
    fg_http_progress_fn progress;
    void *user;
    long long received;
    long long max_bytes;
    int over_limit;
    CURL *curl;
    int resuming;
    long long discarded;
    int fd;
    fg_sha256_state *hash;
    int write_failed;
} transfer;

/// Appends to the transfer's file and hash; returns n, or 0 when the disk refuses.
static size_t to_file(transfer *t, const char *data, size_t n) {
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(t->fd, data + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) { t->write_failed = 1; return 0; }
        done += (size_t)w;
    }
    if (t->hash) fg_sha256_update(t->hash, (const unsigned char *)data, n);
    return n;
}

static size_t on_body(char *data, size_t size, size_t count, void *opaque) {
    transfer *t = opaque;
    size_t n = size * count;
    // Only the body of a 200 (or of the 206 that answers a resumed request) is the file: an error
    // page (404, 500, a redirect) is read and dropped, never handed on as data (at most 64 KiB of it).
    long status = 0;
    curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
    if (!(status == 200 || (status == 206 && t->resuming))) {
        t->discarded += (long long)n;
        return t->discarded > 65536 ? 0 : n;
    }
    if (t->max_bytes >= 0 && t->received + (long long)n > t->max_bytes) {
        t->over_limit = 1;
        return 0;  // aborts: CURLE_WRITE_ERROR
    }
    size_t taken = t->fd >= 0 ? to_file(t, data, n) : t->write(t->user, (const unsigned char *)data, n);
    if (taken == n) t->received += (long long)n;
    return taken;
}

static int on_progress(void *opaque, curl_off_t total, curl_off_t received, curl_off_t up_total, curl_off_t up) {
    (void)up_total; (void)up;
    transfer *t = opaque;
    return t->progress ? t->progress(t->user, (long long)received, (long long)total) : 0;
}

int fg_http_get(const fg_http_request *request, fg_http_write_fn write, fg_http_progress_fn progress, void *user,
                fg_http_result *result) {
    pthread_once(&global_once, global_init);
    memset(result, 0, sizeof *result);
    CURL *curl = curl_easy_init();
    if (!curl) {
        result->curl_code = CURLE_FAILED_INIT;
        snprintf(result->message, sizeof result->message, "libcurl could not start");
        return -1;
    }
    transfer t = {write, progress, user, 0, request->max_bytes, 0, curl, request->resume_from > 0, 0, request->write_fd, request->hash, 0};
    struct curl_slist *headers = NULL;
    char authorization[1024];
    if (request->bearer_token) {
        snprintf(authorization, sizeof authorization, "Authorization: Bearer %s", request->bearer_token);
        headers = curl_slist_append(headers, authorization);
        curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    }
    curl_easy_setopt(curl, CURLOPT_URL, request->url);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
    if (request->ca_file) curl_easy_setopt(curl, CURLOPT_CAINFO, request->ca_file);
    if (request->resume_from > 0) curl_easy_setopt(curl, CURLOPT_RESUME_FROM_LARGE, (curl_off_t)request->resume_from);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, request->connect_timeout_ms > 0 ? request->connect_timeout_ms : 10000L);
    if (request->total_timeout_ms > 0) curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, request->total_timeout_ms);
    if (request->low_speed_seconds > 0) {
        curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, request->low_speed_bytes > 0 ? request->low_speed_bytes : 1L);
        curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, request->low_speed_seconds);
    }
    curl_easy_setopt(curl, CURLOPT_BUFFERSIZE, 256L * 1024L);  // fewer, larger writes
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &t);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    char error[CURL_ERROR_SIZE];
    error[0] = 0;
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
    CURLcode code = curl_easy_perform(curl);
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    result->status = status;
    result->curl_code = (int)code;
    result->received = t.received;
    result->partial_content = status == 206;
    if (t.write_failed) {
        snprintf(result->message, sizeof result->message, "cannot write the downloaded bytes (%s)", strerror(errno));
    } else if (t.over_limit) {
        snprintf(result->message, sizeof result->message, "the server sent more than the %lld bytes expected", request->max_bytes);
    } else if (code != CURLE_OK) {
        snprintf(result->message, sizeof result->message, "%s", error[0] ? error : curl_easy_strerror(code));
    }
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    return code == CURLE_OK ? 0 : -1;
}
