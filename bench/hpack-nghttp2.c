/* nghttp2's HPACK on the same header lists as bench/hpack-micro.ts: CPU ns per block, encoding and decoding.
   Built and run by bench/hpack-micro.ts (cc -O2 ... -lnghttp2, libnghttp2-dev); reads the lists and our
   encoder's blocks from the file it is given, one workload after another.
   Usage: hpack-nghttp2 FILE [PASSES] [ROUNDS]: prints the best round per workload. */
#include <nghttp2/nghttp2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_LISTS 1024
#define MAX_FIELDS 32

typedef struct {
  nghttp2_nv fields[MAX_FIELDS];
  size_t count;
  uint8_t *block;
  size_t block_length;
} list_t;

static list_t lists[MAX_LISTS];
static char line[1 << 16];

static uint8_t *from_hex(const char *hex, size_t *length) {
  size_t n = strlen(hex) / 2;
  uint8_t *out = malloc(n + 1);
  for (size_t i = 0; i < n; i++) sscanf(hex + 2 * i, "%2hhx", &out[i]);
  out[n] = 0;
  *length = n;
  return out;
}

static double cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int rounds = 3;

static void run(const char *name, size_t n, int passes) {
  uint8_t out[65536];
  size_t sink = 0;
  double best_encode = 1e18, best_decode = 1e18;
  for (int round = 0; round < rounds; round++) {
    double start = cpu_ns();
    for (int pass = 0; pass < passes; pass++) {
      nghttp2_hd_deflater *deflater;
      nghttp2_hd_deflate_new(&deflater, 4096);
      for (size_t i = 0; i < n; i++) sink += (size_t)nghttp2_hd_deflate_hd(deflater, out, sizeof out, lists[i].fields, lists[i].count);
      nghttp2_hd_deflate_del(deflater);
    }
    double encode = (cpu_ns() - start) / (passes * (double)n);
    start = cpu_ns();
    for (int pass = 0; pass < passes; pass++) {
      nghttp2_hd_inflater *inflater;
      nghttp2_hd_inflate_new(&inflater);
      for (size_t i = 0; i < n; i++) {
        const uint8_t *in = lists[i].block;
        size_t left = lists[i].block_length;
        for (;;) {
          nghttp2_nv nv;
          int flags = 0;
          ssize_t used = nghttp2_hd_inflate_hd2(inflater, &nv, &flags, in, left, 1);
          if (used < 0) { fprintf(stderr, "%s: inflate failed\n", name); exit(1); }
          in += used;
          left -= (size_t)used;
          if (flags & NGHTTP2_HD_INFLATE_EMIT) sink += nv.valuelen;
          if (flags & NGHTTP2_HD_INFLATE_FINAL) { nghttp2_hd_inflate_end_headers(inflater); break; }
          if ((flags & NGHTTP2_HD_INFLATE_EMIT) == 0 && left == 0) break;
        }
      }
      nghttp2_hd_inflate_del(inflater);
    }
    double decode = (cpu_ns() - start) / (passes * (double)n);
    if (encode < best_encode) best_encode = encode;
    if (decode < best_decode) best_decode = decode;
  }
  printf("%s\t%.0f\t%.0f\t%zu\n", name, best_encode, best_decode, sink & 1);
}

int main(int argc, char **argv) {
  FILE *file = fopen(argv[1], "r");
  int passes = argc > 2 ? atoi(argv[2]) : 200;
  rounds = argc > 3 ? atoi(argv[3]) : 3;
  char name[256] = "";
  size_t n = 0;
  if (file == NULL) return 2;
  while (fgets(line, sizeof line, file) != NULL) {
    line[strcspn(line, "\n")] = 0;
    if (line[0] == 'W') {
      if (n > 0) run(name, n, passes);
      for (size_t i = 0; i < MAX_LISTS; i++) lists[i].count = 0;
      snprintf(name, sizeof name, "%s", line + 2);
      n = 0;
    } else if (line[0] == 'F') {
      list_t *list = &lists[n];
      char *value = strchr(line + 2, ' ');
      *value++ = 0;
      nghttp2_nv *nv = &list->fields[list->count++];
      nv->name = from_hex(line + 2, &nv->namelen);
      nv->value = from_hex(value, &nv->valuelen);
      nv->flags = NGHTTP2_NV_FLAG_NONE;
    } else if (line[0] == 'B') {
      lists[n].block = from_hex(line + 2, &lists[n].block_length);
      n++;
    }
  }
  if (n > 0) run(name, n, passes);
  return 0;
}
