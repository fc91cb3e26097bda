/* faultline-faketime-shim: lets libfaketime run inside programs that use
 * jemalloc (Debian's redis-server). Preload it BEFORE libfaketime:
 *   LD_PRELOAD=libfaultline-faketime-shim.so:libfaketimeMT.so.1
 * See docs/faults.md ("clock", "The Redis shim").
 *
 * Why redis-server hangs with libfaketime alone (seen with gdb; Debian 12,
 * libfaketime 0.9.10, redis 7.0, libjemalloc2 5.3): a library constructor
 * (libgpg-error's bindtextdomain) calls malloc; jemalloc initialises, and
 * while it holds its initialisation mutex it reads the clock
 * (clock_gettime). That is libfaketime's, which initialises itself lazily
 * at its first call: it looks up the real functions with dlsym, and one of
 * them (__ftime) does not exist in glibc 2.36, so dlsym formats an error
 * message with malloc. That malloc enters jemalloc again and waits forever
 * for the mutex its own thread holds. Later, libfaketime also reads its
 * timestamp file (fopen: malloc) inside clock calls, which jemalloc may
 * make while it holds an arena's decay mutex.
 *
 Once past that, jemalloc also calls pthread_cond_init while it holds the
 * same mutex, and libfaketime's pthread_cond_init both initialises
 * libfaketime and mallocs a hash entry for the condition variable.
 *
 * The fix: the allocator must never re-enter itself through libfaketime.
 * This library defines the functions jemalloc calls that libfaketime wraps
 * (clock_gettime, pthread_cond_init, pthread_cond_destroy,
 * pthread_cond_timedwait) and looks at who called them: a call from inside
 * libjemalloc's code goes straight to glibc's own function (the allocator
 * only times its page purging with them, so the real clock is right
 * there); any other call goes on to the next definition, libfaketime's,
 * unchanged. So libfaketime initialises at the program's own first call,
 * where malloc is safe. A clock_gettime that arrives while the same thread
 * is already inside the forwarded one (libfaketime calling back) also goes
 * to glibc, so no recursion can start.
 *
 glibc's functions are found through glibc's own link map (dladdr1 of a
 * glibc address, then dlvsym on it), so libfaketime's definitions, which
 * come first in the global scope, are skipped. None of this allocates: no
 * libstdc++, no malloc, no locks of its own; a thread-local depth counter
 * in the static TLS block, the allocator's code ranges found once with
 * dl_iterate_phdr, and atomics. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SHIM_EXPORT __attribute__((visibility("default"), noinline))

enum { kMaxRanges = 4 };

static __thread int depth __attribute__((tls_model("initial-exec")));
static int ranges_state; /* 0: not searched, 1: searching, 2: searched */
static ElfW(Addr) range_lo[kMaxRanges], range_hi[kMaxRanges];
static int range_count;

/* Records the executable segments of libjemalloc. */
static int find_allocator(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  (void)arg;
  if (info->dlpi_name == NULL || strstr(info->dlpi_name, "libjemalloc") == NULL)
    return 0;
  for (int i = 0; i < info->dlpi_phnum && range_count < kMaxRanges; ++i) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || (ph->p_flags & PF_X) == 0) continue;
    range_lo[range_count] = info->dlpi_addr + ph->p_vaddr;
    range_hi[range_count] = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
    ++range_count;
  }
  return 1;
}

static int from_allocator(const void *return_address) {
  int state = __atomic_load_n(&ranges_state, __ATOMIC_ACQUIRE);
  if (state != 2) {
    int expected = 0;
    if (__atomic_compare_exchange_n(&ranges_state, &expected, 1, 0,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      dl_iterate_phdr(find_allocator, NULL);
      __atomic_store_n(&ranges_state, 2, __ATOMIC_RELEASE);
    } else {
      while (__atomic_load_n(&ranges_state, __ATOMIC_ACQUIRE) != 2) {
      }
    }
  }
  ElfW(Addr) a = (ElfW(Addr))return_address;
  for (int i = 0; i < range_count; ++i)
    if (a >= range_lo[i] && a < range_hi[i]) return 1;
  return 0;
}

/* glibc's own definition of `name`@`version`, looked up in libc.so.6's
 * dynamic symbol table (GNU hash, version definitions) directly: the dl*
 * functions either search the global scope, where the preloaded
 * definitions come first, or need a handle from dlopen, which allocates. */
struct libc_info {
  ElfW(Addr) base;
  const ElfW(Dyn) * dynamic;
};

static int find_libc(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  if (info->dlpi_name == NULL || strstr(info->dlpi_name, "/libc.so.6") == NULL)
    return 0;
  struct libc_info *out = (struct libc_info *)arg;
  for (int i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) {
      out->base = info->dlpi_addr;
      out->dynamic =
          (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
      return 1;
    }
  return 0;
}

static uint32_t gnu_hash(const char *name) {
  uint32_t h = 5381;
  for (const unsigned char *c = (const unsigned char *)name; *c; ++c)
    h = h * 33 + *c;
  return h;
}

static void *glibc_symbol(const char *name, const char *version) {
  struct libc_info libc = {0, NULL};
  dl_iterate_phdr(find_libc, &libc);
  if (libc.dynamic == NULL) return NULL;
  ElfW(Addr) symtab = 0, strtab = 0, hash = 0, versym = 0, verdef = 0;
  for (const ElfW(Dyn) *d = libc.dynamic; d->d_tag != DT_NULL; ++d) {
    /* ld.so has made most of these absolute in place; be safe either way. */
    ElfW(Addr) v =
        d->d_un.d_ptr < libc.base ? libc.base + d->d_un.d_ptr : d->d_un.d_ptr;
    if (d->d_tag == DT_SYMTAB) symtab = v;
    if (d->d_tag == DT_STRTAB) strtab = v;
    if (d->d_tag == DT_GNU_HASH) hash = v;
    if (d->d_tag == DT_VERSYM) versym = v;
    if (d->d_tag == DT_VERDEF) verdef = v;
  }
  if (!symtab || !strtab || !hash || !versym || !verdef) return NULL;
  const ElfW(Sym) *syms = (const ElfW(Sym) *)symtab;
  const char *strs = (const char *)strtab;
  const uint32_t *h = (const uint32_t *)hash;
  const uint32_t nbuckets = h[0], symoffset = h[1], bloom_words = h[2];
  const uint32_t *buckets =
      (const uint32_t *)((const ElfW(Addr) *)(h + 4) + bloom_words);
  const uint32_t *chain = buckets + nbuckets;
  const uint32_t want = gnu_hash(name);
  uint32_t i = buckets[want % nbuckets];
  if (i < symoffset) return NULL;
  for (;; ++i) {
    const uint32_t got = chain[i - symoffset];
    if ((got | 1) == (want | 1) && strcmp(strs + syms[i].st_name, name) == 0 &&
        syms[i].st_shndx != SHN_UNDEF) {
      const ElfW(Half) index = ((const ElfW(Half) *)versym)[i] & 0x7fff;
      const ElfW(Verdef) *vd = (const ElfW(Verdef) *)verdef;
      for (;;) {
        if (vd->vd_ndx == index) {
          const ElfW(Verdaux) *aux =
              (const ElfW(Verdaux) *)((const char *)vd + vd->vd_aux);
          if (strcmp(strs + aux->vda_name, version) == 0)
            return (void *)(libc.base + syms[i].st_value);
          break;
        }
        if (vd->vd_next == 0) break;
        vd = (const ElfW(Verdef) *)((const char *)vd + vd->vd_next);
      }
    }
    if (got & 1) return NULL;
  }
}

/* The next definition after this library's (libfaketime's), whatever its
 * version: libfaketime exports clock_gettime without one, so asking for
 * GLIBC_2.17 would skip it and reach glibc's, and the program would never
 * see the faked clock. `version` is for glibc_symbol only. */
static void *next_symbol(const char *name, const char *version) {
  (void)version;
  return dlsym(RTLD_NEXT, name);
}

/* A lazily looked-up function pointer; `find` runs at most a few times
 * (racing threads find the same pointer). */
#define LOOKUP(slot, find, name, version)                               \
  do {                                                                  \
    if (__atomic_load_n(&(slot), __ATOMIC_ACQUIRE) == NULL)             \
      __atomic_store_n(&(slot), find(name, version), __ATOMIC_RELEASE); \
  } while (0)

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);
typedef int (*cond_init_fn)(pthread_cond_t *, const pthread_condattr_t *);
typedef int (*cond_destroy_fn)(pthread_cond_t *);
typedef int (*cond_timedwait_fn)(pthread_cond_t *, pthread_mutex_t *,
                                 const struct timespec *);

static clock_gettime_fn glibc_clock_gettime, next_clock_gettime;
static cond_init_fn glibc_cond_init, next_cond_init;
static cond_destroy_fn glibc_cond_destroy, next_cond_destroy;
static cond_timedwait_fn glibc_cond_timedwait, next_cond_timedwait;

static int kernel_clock_gettime(clockid_t id, struct timespec *ts) {
  return (int)syscall(SYS_clock_gettime, id, ts);
}

SHIM_EXPORT int clock_gettime(clockid_t id, struct timespec *ts) {
  if (depth > 0 || from_allocator(__builtin_return_address(0))) {
    LOOKUP(glibc_clock_gettime, glibc_symbol, "clock_gettime", "GLIBC_2.17");
    clock_gettime_fn f = glibc_clock_gettime;
    return f != NULL ? f(id, ts) : kernel_clock_gettime(id, ts);
  }
  ++depth;
  LOOKUP(next_clock_gettime, next_symbol, "clock_gettime", "GLIBC_2.17");
  clock_gettime_fn f = next_clock_gettime;
  int rc = f != NULL ? f(id, ts) : kernel_clock_gettime(id, ts);
  --depth;
  return rc;
}

SHIM_EXPORT int pthread_cond_init(pthread_cond_t *cond,
                                  const pthread_condattr_t *attr) {
  cond_init_fn f;
  if (from_allocator(__builtin_return_address(0))) {
    LOOKUP(glibc_cond_init, glibc_symbol, "pthread_cond_init", "GLIBC_2.3.2");
    f = glibc_cond_init;
  } else {
    LOOKUP(next_cond_init, next_symbol, "pthread_cond_init", "GLIBC_2.3.2");
    f = next_cond_init;
  }
  return f != NULL ? f(cond, attr) : -1;
}

SHIM_EXPORT int pthread_cond_destroy(pthread_cond_t *cond) {
  cond_destroy_fn f;
  if (from_allocator(__builtin_return_address(0))) {
    LOOKUP(glibc_cond_destroy, glibc_symbol, "pthread_cond_destroy",
           "GLIBC_2.3.2");
    f = glibc_cond_destroy;
  } else {
    LOOKUP(next_cond_destroy, next_symbol, "pthread_cond_destroy",
           "GLIBC_2.3.2");
    f = next_cond_destroy;
  }
  return f != NULL ? f(cond) : -1;
}

SHIM_EXPORT int pthread_cond_timedwait(pthread_cond_t *cond,
                                       pthread_mutex_t *mutex,
                                       const struct timespec *abstime) {
  cond_timedwait_fn f;
  if (from_allocator(__builtin_return_address(0))) {
    LOOKUP(glibc_cond_timedwait, glibc_symbol, "pthread_cond_timedwait",
           "GLIBC_2.3.2");
    f = glibc_cond_timedwait;
  } else {
    LOOKUP(next_cond_timedwait, next_symbol, "pthread_cond_timedwait",
           "GLIBC_2.3.2");
    f = next_cond_timedwait;
  }
  return f != NULL ? f(cond, mutex, abstime) : -1;
}
