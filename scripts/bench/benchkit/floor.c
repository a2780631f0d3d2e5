/* The restore floor: the least a restore of this tar stream can cost on this filesystem.
 *
 * Why: restoring on a 2-core machine is dominated by creating files and folders, not by decompressing. To say
 * how far ccpack restore is from what the kernel allows, this program does only that: given the tar stream
 * already decompressed and in memory, it creates the same folders, files (same bytes, same modes) and symlinks
 * under DEST, and nothing else: no hashing, no checks, no staging and swap.
 *
 * How: the tar file is read whole and its entries listed before the clock starts (ustar headers and the pax `x`
 * records path, linkpath and size that ccpack writes). Timed: folders are made in stream order (parents first),
 * then files and symlinks by THREADS threads, each taking whole folders (an entry goes to the thread numbered
 * by its folder, so no two threads write into one folder, as ccpack's writers do not), then, separately timed,
 * syncfs (ccpack restore makes its staging durable before the swap with --durable; stock tar does not), unless
 * the fourth argument is "no-sync" (sync_s is then 0).
 * Prints one line: "create_s=<seconds> sync_s=<seconds> files=<n> dirs=<n>".
 *
 * Usage: floor TAR DEST THREADS [no-sync]   (DEST must exist and be empty)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct entry {
  char *path, *link;
  char type;
  unsigned mode;
  const char *data;
  uint64_t size;
  unsigned folder; /* index of the parent folder, to split work between threads */
};

static struct entry *entries;
static size_t n_entries;
static int dest_fd;
static unsigned n_threads;

static void die(const char *what, const char *path) {
  fprintf(stderr, "floor: %s %s: %m\n", what, path ? path : "");
  exit(1);
}

static uint64_t octal(const char *p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n && p[i] >= '0' && p[i] <= '7'; ++i) v = v * 8 + (uint64_t)(p[i] - '0');
  return v;
}

static unsigned folder_of(const char *path) {
  const char *slash = strrchr(path, '/');
  unsigned h = 2166136261u;
  for (const char *p = path; slash && p < slash; ++p) h = (h ^ (unsigned char)*p) * 16777619u;
  return h;
}

/* pax records "LEN key=value\n": path, linkpath and size override the ustar fields of the next entry. */
static void pax(const char *p, uint64_t n, char **path, char **link, uint64_t *size) {
  const char *end = p + n;
  while (p < end) {
    char *sp;
    unsigned long len = strtoul(p, &sp, 10);
    if (len == 0 || p + len > end) break;
    const char *key = sp + 1, *eq = memchr(key, '=', (size_t)(p + len - key));
    if (!eq) break;
    size_t vlen = (size_t)(p + len - 1 - (eq + 1));
    if (eq - key == 4 && !memcmp(key, "path", 4)) *path = strndup(eq + 1, vlen);
    if (eq - key == 8 && !memcmp(key, "linkpath", 8)) *link = strndup(eq + 1, vlen);
    if (eq - key == 4 && !memcmp(key, "size", 4)) *size = strtoull(eq + 1, NULL, 10);
    p += len;
  }
}

static void list(const char *tar, uint64_t total) {
  size_t cap = 1024;
  entries = malloc(cap * sizeof *entries);
  char *xpath = NULL, *xlink = NULL;
  uint64_t xsize = UINT64_MAX;
  for (uint64_t at = 0; at + 512 <= total && tar[at] != 0;) {
    const char *h = tar + at;
    uint64_t size = xsize != UINT64_MAX ? xsize : octal(h + 124, 12);
    const char *data = h + 512;
    at += 512 + (size + 511) / 512 * 512;
    if (h[156] == 'x') {
      pax(data, octal(h + 124, 12), &xpath, &xlink, &xsize);
      continue;
    }
    char name[257] = {0};
    if (h[345]) snprintf(name, sizeof name, "%.155s/%.100s", h + 345, h);
    else snprintf(name, sizeof name, "%.100s", h);
    if (n_entries == cap) entries = realloc(entries, (cap *= 2) * sizeof *entries);
    struct entry *e = &entries[n_entries++];
    e->path = xpath ? xpath : strdup(name);
    e->link = xlink ? xlink : strndup(h + 157, 100);
    e->type = h[156] ? h[156] : '0';
    e->mode = (unsigned)octal(h + 100, 8) & 07777;
    e->data = data;
    e->size = size;
    size_t l = strlen(e->path);
    if (l && e->path[l - 1] == '/') e->path[l - 1] = 0;
    e->folder = folder_of(e->path);
    xpath = xlink = NULL;
    xsize = UINT64_MAX;
  }
}

static void *writer(void *arg) {
  unsigned me = (unsigned)(uintptr_t)arg;
  for (size_t i = 0; i < n_entries; ++i) {
    struct entry *e = &entries[i];
    if (e->type == '5' || e->folder % n_threads != me) continue;
    if (e->type == '2') {
      if (symlinkat(e->link, dest_fd, e->path) != 0) die("symlink", e->path);
      continue;
    }
    int fd = openat(dest_fd, e->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, e->mode);
    if (fd < 0) die("create", e->path);
    for (uint64_t done = 0; done < e->size;) {
      ssize_t n = write(fd, e->data + done, e->size - done);
      if (n <= 0) die("write", e->path);
      done += (uint64_t)n;
    }
    close(fd);
  }
  return NULL;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  int sync_after = argc == 4;
  if (argc != 4 && !(argc == 5 && strcmp(argv[4], "no-sync") == 0)) {
    fprintf(stderr, "usage: floor TAR DEST THREADS [no-sync]\n");
    return 2;
  }
  int in = open(argv[1], O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (in < 0 || fstat(in, &st) != 0) die("open", argv[1]);
  char *tar = malloc((size_t)st.st_size + 1);
  for (off_t got = 0; got < st.st_size;) {
    ssize_t n = read(in, tar + got, (size_t)(st.st_size - got));
    if (n <= 0) die("read", argv[1]);
    got += n;
  }
  close(in);
  list(tar, (uint64_t)st.st_size);
  dest_fd = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dest_fd < 0) die("open", argv[2]);
  n_threads = (unsigned)atoi(argv[3]);
  if (n_threads < 1) n_threads = 1;
  umask(0);
  size_t dirs = 0;
  double t0 = now();
  for (size_t i = 0; i < n_entries; ++i) {
    if (entries[i].type != '5') continue;
    if (mkdirat(dest_fd, entries[i].path, entries[i].mode) != 0) die("mkdir", entries[i].path);
    ++dirs;
  }
  pthread_t th[256];
  if (n_threads > 256) n_threads = 256;
  for (unsigned t = 1; t < n_threads; ++t) pthread_create(&th[t], NULL, writer, (void *)(uintptr_t)t);
  writer((void *)0);
  for (unsigned t = 1; t < n_threads; ++t) pthread_join(th[t], NULL);
  double t1 = now();
  if (sync_after && syncfs(dest_fd) != 0) die("syncfs", argv[2]);
  double t2 = now();
  printf("create_s=%.6f sync_s=%.6f files=%zu dirs=%zu\n", t1 - t0, t2 - t1, n_entries - dirs, dirs);
  return 0;
}
