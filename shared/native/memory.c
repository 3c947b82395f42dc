/*
 * Memory (part of the addon: see addon.c).
 *
 *  - mapShared: a file mapped MAP_SHARED as an ArrayBuffer, for counters that every process of
 *    the tree reads and writes (circuit breakers, rate-limit buckets, watchdog counters);
 *    unmapped when the buffer is collected.
 *  - mallocTrim: the C heap's free pages given back to the kernel.
 *  - lowMemory: V8 told that memory is short (node::LowMemoryNotification, part of Node's embedder
 *    API in node.h): a full collection that also shrinks the heap's spaces to what they hold.
 */
#include "addon.h"

#include <errno.h>
#include <fcntl.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static void unmap_shared(napi_env env, void *data, void *hint) {
  (void)env;
  munmap(data, (size_t)(uintptr_t)hint);
}

/* mapShared(path, size, create): create (O_EXCL) and size the file, or open an existing one. */
static napi_value map_shared(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  char path[4096];
  int64_t size;
  bool create;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 3 || get_string(env, argv[0], path, sizeof path) < 0 || napi_get_value_int64(env, argv[1], &size) != napi_ok ||
      napi_get_value_bool(env, argv[2], &create) != napi_ok || size <= 0)
    return throw_type(env, "mapShared(path, size > 0, create)");
  int fd = open(path, create ? O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC : O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) return throw_errno(env, "open", errno);
  if (create && ftruncate(fd, (off_t)size) < 0) {
    int err = errno;
    close(fd);
    return throw_errno(env, "ftruncate", err);
  }
  struct stat st;
  if (fstat(fd, &st) < 0) {
    int err = errno;
    close(fd);
    return throw_errno(env, "fstat", err);
  }
  if (st.st_size < size) {
    close(fd);
    return throw_errno(env, "mapShared (the file is smaller than asked)", EINVAL);
  }
  void *addr = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int err = errno;
  close(fd);
  if (addr == MAP_FAILED) return throw_errno(env, "mmap", err);
  napi_value buffer;
  if (napi_create_external_arraybuffer(env, addr, (size_t)size, unmap_shared, (void *)(uintptr_t)size, &buffer) != napi_ok) {
    munmap(addr, (size_t)size);
    return throw_errno(env, "napi_create_external_arraybuffer", ENOMEM);
  }
  return buffer;
}

/*
 * mallocTrim(): glibc's malloc_trim(0), which gives back to the kernel the free pages anywhere in
 * the heap (free() only returns what is at its top, above a threshold glibc raises as a process
 * frees large blocks). True when it released something. False where the C library is not glibc.
 */
static napi_value malloc_trim_js(napi_env env, napi_callback_info info) {
  (void)info;
#ifdef __GLIBC__
  int released = malloc_trim(0);
#else
  int released = 0;
#endif
  napi_value out;
  napi_get_boolean(env, released != 0, &out);
  return out;
}

/*
 * node::LowMemoryNotification() (node.h), named as the C++ ABI names it: this addon is C, and the
 * function takes nothing and returns nothing, so its mangled name is all that differs. Node
 * exports it from its binary for addons.
 */
void _ZN4node21LowMemoryNotificationEv(void);

/* lowMemory(): V8 collects all garbage and gives back its heap's pages beyond what is live. */
static napi_value low_memory(napi_env env, napi_callback_info info) {
  (void)env;
  (void)info;
  _ZN4node21LowMemoryNotificationEv();
  return NULL;
}

void define_memory(napi_env env, napi_value exports) {
  static const addon_function_t fns[] = {
      {"mapShared", map_shared},
      {"mallocTrim", malloc_trim_js},
      {"lowMemory", low_memory},
  };
  define_functions(env, exports, fns, sizeof fns / sizeof fns[0]);
}
