/*
 * Sockets and descriptors (part of the addon: see addon.c).
 *
 *  - listenTcp / listenUnix / bindUdp: create a listening (or bound) socket and return its raw
 *    descriptor (a TCP one with the listener's socket options set before bind, after bind or once
 *    listening). The supervisor holds listening sockets without ever polling them (a polling
 *    process that does not accept strands connections); workers serve them with
 *    net.Server.listen({fd}).
 *  - dgramOpen / dgramSend / dgramClose: AF_UNIX SOCK_DGRAM sockets that carry descriptors as
 *    SCM_RIGHTS, for hot restart between unrelated processes. Abstract names ("@name") are
 *    NUL-padded to sizeof(sun_path), as Node and Envoy pad them. Receiving is integrated with
 *    Node's event loop through uv_poll; each datagram is delivered to a JS callback with the
 *    sender's uid and pid as the kernel vouches for them (SO_PASSCRED / SCM_CREDENTIALS): an
 *    abstract name has no file permissions, so who sent a datagram is the first thing to check.
 *  - socketPair / dgramAdopt / sendFd: a datagram pair between the supervisor and a worker it
 *    forks, for listening sockets added after the fork (the listener discovery service): the
 *    worker inherits one end and polls it; the supervisor sends each new socket on the other.
 *  - closeFd: close a raw descriptor (a received one that is not kept, or a listener's).
 *  - sdNotify: one datagram to systemd's notification socket.
 */
#include "addon.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_DGRAM 65536

/* [a, b] as a JS array of two numbers. */
static napi_value int_pair(napi_env env, int32_t a, int32_t b) {
  napi_value result, va, vb;
  napi_create_array_with_length(env, 2, &result);
  napi_create_int32(env, a, &va);
  napi_create_int32(env, b, &vb);
  napi_set_element(env, result, 0, va);
  napi_set_element(env, result, 1, vb);
  return result;
}

/* Puts `fd` in `msg` as SCM_RIGHTS, in `control` (CMSG_SPACE(sizeof(int)) bytes). */
static void attach_fd(struct msghdr *msg, char *control, size_t size, int fd) {
  memset(control, 0, size);
  msg->msg_control = control;
  msg->msg_controllen = size;
  struct cmsghdr *c = CMSG_FIRSTHDR(msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof(int));
}

/* "@name" is abstract (padded to the whole sun_path); anything else is a file-system path. */
static int unix_address(const char *path, struct sockaddr_un *addr, socklen_t *len) {
  memset(addr, 0, sizeof *addr);
  addr->sun_family = AF_UNIX;
  size_t n = strlen(path);
  if (n == 0 || n >= sizeof addr->sun_path) return -1;
  if (path[0] == '@') {
    memcpy(addr->sun_path + 1, path + 1, n - 1);
    *len = sizeof *addr;
  } else {
    memcpy(addr->sun_path, path, n);
    *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
  }
  return 0;
}

/*
 * Socket options of a listener (Envoy's SocketOption, and freebind), each [state, level, name,
 * value]: state 0 before bind, 1 after bind, 2 once listening; value an integer or a Buffer.
 */
#define MAX_SOCKET_OPTIONS 32
typedef struct {
  int32_t state, level, name;
  int32_t int_value;
  void *buf;
  size_t buf_len;
  bool is_buf;
} socket_option_t;

static int read_socket_options(napi_env env, napi_value list, socket_option_t *out, uint32_t *count) {
  bool is_array = false;
  if (napi_is_array(env, list, &is_array) != napi_ok || !is_array) return -1;
  uint32_t n;
  napi_get_array_length(env, list, &n);
  if (n > MAX_SOCKET_OPTIONS) return -1;
  for (uint32_t i = 0; i < n; i++) {
    napi_value item, field;
    napi_get_element(env, list, i, &item);
    socket_option_t *o = &out[i];
    memset(o, 0, sizeof *o);
    if (napi_get_element(env, item, 0, &field) != napi_ok || napi_get_value_int32(env, field, &o->state) != napi_ok) return -1;
    if (napi_get_element(env, item, 1, &field) != napi_ok || napi_get_value_int32(env, field, &o->level) != napi_ok) return -1;
    if (napi_get_element(env, item, 2, &field) != napi_ok || napi_get_value_int32(env, field, &o->name) != napi_ok) return -1;
    if (napi_get_element(env, item, 3, &field) != napi_ok) return -1;
    bool is_buffer = false;
    napi_is_buffer(env, field, &is_buffer);
    if (is_buffer) {
      o->is_buf = true;
      if (napi_get_buffer_info(env, field, &o->buf, &o->buf_len) != napi_ok) return -1;
    } else if (napi_get_value_int32(env, field, &o->int_value) != napi_ok) {
      return -1;
    }
  }
  *count = n;
  return 0;
}

/* Applies the options of `state`; on failure returns the failing option (errno set), else NULL. */
static const socket_option_t *apply_socket_options(int fd, const socket_option_t *options, uint32_t count, int32_t state) {
  for (uint32_t i = 0; i < count; i++) {
    const socket_option_t *o = &options[i];
    if (o->state != state) continue;
    int rc = o->is_buf ? setsockopt(fd, o->level, o->name, o->buf, (socklen_t)o->buf_len)
                       : setsockopt(fd, o->level, o->name, &o->int_value, sizeof o->int_value);
    if (rc < 0) return o;
  }
  return NULL;
}

static napi_value socket_option_error(napi_env env, int fd, const socket_option_t *o) {
  int err = errno;
  close(fd);
  char syscall[64];
  snprintf(syscall, sizeof syscall, "setsockopt(level %d, name %d)", o->level, o->name);
  return throw_errno(env, syscall, err);
}

/* listenTcp(host: string, port: number, backlog: number, options?: [state, level, name, value][]) -> [fd, port] */
/*
 * An IP socket bound to a literal address: listenTcp(host, port, backlog, options?) listens (SOCK_STREAM);
 * bindUdp(host, port, options?) is a bound SOCK_DGRAM socket. Returns [fd, bound port].
 */
static napi_value ip_socket(napi_env env, napi_callback_info info, int type) {
  const int dgram = type == SOCK_DGRAM;
  const char *usage = dgram ? "bindUdp(host, port, options?)" : "listenTcp(host, port, backlog, options?)";
  size_t argc = 4;
  napi_value argv[4];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  char host[64];
  int32_t port, backlog = 0;
  size_t options_arg = dgram ? 2 : 3;
  if (argc < options_arg || get_string(env, argv[0], host, sizeof host) < 0 || napi_get_value_int32(env, argv[1], &port) != napi_ok ||
      (!dgram && napi_get_value_int32(env, argv[2], &backlog) != napi_ok) || port < 0 || port > 65535)
    return throw_type(env, usage);
  socket_option_t options[MAX_SOCKET_OPTIONS];
  uint32_t option_count = 0;
  napi_valuetype options_type = napi_undefined;
  if (argc > options_arg) napi_typeof(env, argv[options_arg], &options_type);
  if (options_type != napi_undefined && read_socket_options(env, argv[options_arg], options, &option_count) < 0)
    return throw_type(env, "socket options must be at most 32 [state, level, name, integer or Buffer] entries");

  struct sockaddr_storage ss;
  socklen_t sslen;
  memset(&ss, 0, sizeof ss);
  struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
  struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
  if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
    a4->sin_family = AF_INET;
    a4->sin_port = htons((uint16_t)port);
    sslen = sizeof *a4;
  } else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons((uint16_t)port);
    sslen = sizeof *a6;
  } else {
    return throw_type(env, "host must be an IPv4 or IPv6 literal");
  }

  int fd = socket(ss.ss_family, type | SOCK_CLOEXEC, 0);
  if (fd < 0) return throw_errno(env, "socket", errno);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  /* Envoy binds "::" to IPv6 only unless ipv4_compat is set; do the same. */
  if (ss.ss_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  const socket_option_t *failed = apply_socket_options(fd, options, option_count, 0);
  if (failed) return socket_option_error(env, fd, failed);
  if (bind(fd, (struct sockaddr *)&ss, sslen) < 0) {
    int err = errno;
    close(fd);
    return throw_errno(env, "bind", err);
  }
  if ((failed = apply_socket_options(fd, options, option_count, 1))) return socket_option_error(env, fd, failed);
  if (!dgram) {
    if (listen(fd, backlog) < 0) {
      int err = errno;
      close(fd);
      return throw_errno(env, "listen", err);
    }
    if ((failed = apply_socket_options(fd, options, option_count, 2))) return socket_option_error(env, fd, failed);
  }
  socklen_t len = sizeof ss;
  getsockname(fd, (struct sockaddr *)&ss, &len);
  int bound = ntohs(ss.ss_family == AF_INET ? a4->sin_port : a6->sin6_port);

  return int_pair(env, fd, bound);
}

static napi_value listen_tcp(napi_env env, napi_callback_info info) {
  return ip_socket(env, info, SOCK_STREAM);
}

static napi_value bind_udp(napi_env env, napi_callback_info info) {
  return ip_socket(env, info, SOCK_DGRAM);
}

/* listenUnix(path: string, backlog: number, mode: number) -> fd. mode 0 leaves the file's mode alone. */
static napi_value listen_unix(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  char path[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];
  int32_t backlog, mode;
  if (argc < 3 || get_string(env, argv[0], path, sizeof path) < 0 || napi_get_value_int32(env, argv[1], &backlog) != napi_ok ||
      napi_get_value_int32(env, argv[2], &mode) != napi_ok)
    return throw_type(env, "listenUnix(path, backlog, mode)");
  struct sockaddr_un addr;
  socklen_t len;
  if (unix_address(path, &addr, &len) < 0) return throw_type(env, "listenUnix: path is empty or too long");
  struct stat st;
  /* A stale socket file from an earlier run would make bind fail; never remove anything else. */
  if (path[0] != '@' && lstat(path, &st) == 0 && S_ISSOCK(st.st_mode)) unlink(path);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return throw_errno(env, "socket", errno);
  if (bind(fd, (struct sockaddr *)&addr, len) < 0) {
    int err = errno;
    close(fd);
    return throw_errno(env, "bind", err);
  }
  if (path[0] != '@' && mode != 0 && chmod(path, (mode_t)mode) < 0) {
    int err = errno;
    close(fd);
    return throw_errno(env, "chmod", err);
  }
  if (listen(fd, backlog) < 0) {
    int err = errno;
    close(fd);
    return throw_errno(env, "listen", err);
  }
  napi_value vfd;
  napi_create_int32(env, fd, &vfd);
  return vfd;
}

static napi_value close_fd(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  int32_t fd;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 1 || napi_get_value_int32(env, argv[0], &fd) != napi_ok) return throw_type(env, "closeFd(fd)");
  if (close(fd) < 0) return throw_errno(env, "close", errno);
  return NULL;
}

/* localPort(fd: number) -> the port an IP socket is bound to (0 for other families): how an
 * epoch that inherited a port-0 listener learns its port. */
static napi_value local_port(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  int32_t fd;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 1 || napi_get_value_int32(env, argv[0], &fd) != napi_ok) return throw_type(env, "localPort(fd)");
  struct sockaddr_storage ss;
  socklen_t len = sizeof ss;
  if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0) return throw_errno(env, "getsockname", errno);
  int port = 0;
  if (ss.ss_family == AF_INET) port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
  else if (ss.ss_family == AF_INET6) port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
  napi_value result;
  napi_create_int32(env, port, &result);
  return result;
}

/* tcpKeepalive(fd, probes, idleSeconds, intervalSeconds): SO_KEEPALIVE on a connected TCP socket,
 * with TCP_KEEPCNT, TCP_KEEPIDLE and TCP_KEEPINTVL for each one above 0 (0: the system's), as
 * Envoy applies a cluster's upstream_connection_options.tcp_keepalive. */
static napi_value tcp_keepalive(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  int32_t v[4];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 4) return throw_type(env, "tcpKeepalive(fd, probes, idle, interval)");
  for (int i = 0; i < 4; i++) {
    if (napi_get_value_int32(env, argv[i], &v[i]) != napi_ok) return throw_type(env, "tcpKeepalive(fd, probes, idle, interval)");
  }
  int one = 1;
  if (setsockopt(v[0], SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one) < 0) return throw_errno(env, "setsockopt(SO_KEEPALIVE)", errno);
  static const int names[3] = {TCP_KEEPCNT, TCP_KEEPIDLE, TCP_KEEPINTVL};
  static const char *const labels[3] = {"setsockopt(TCP_KEEPCNT)", "setsockopt(TCP_KEEPIDLE)", "setsockopt(TCP_KEEPINTVL)"};
  for (int i = 0; i < 3; i++) {
    if (v[i + 1] > 0 && setsockopt(v[0], IPPROTO_TCP, names[i], &v[i + 1], sizeof v[i + 1]) < 0) return throw_errno(env, labels[i], errno);
  }
  return NULL;
}

/* sdNotify(socketPath: string, message: string): one datagram to systemd's NOTIFY_SOCKET, as
 * sd_notify(3) sends it: a file path, or "@name" abstract with the name's exact length (systemd
 * binds abstract names unpadded, unlike the hot-restart sockets). Returns the bytes sent. */
static napi_value sd_notify_send(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  char path[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];
  char message[4096];
  if (argc < 2 || get_string(env, argv[0], path, sizeof path) < 0 || get_string(env, argv[1], message, sizeof message) < 0)
    return throw_type(env, "sdNotify(socketPath, message)");
  struct sockaddr_un addr;
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  size_t n = strlen(path);
  if (n == 0 || n >= sizeof addr.sun_path) return throw_type(env, "sdNotify: socket path is empty or too long");
  memcpy(addr.sun_path, path, n);
  if (path[0] == '@') addr.sun_path[0] = 0;
  socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return throw_errno(env, "socket", errno);
  ssize_t sent = sendto(fd, message, strlen(message), MSG_NOSIGNAL, (struct sockaddr *)&addr, len);
  int err = errno;
  close(fd);
  if (sent < 0) return throw_errno(env, "sendto", err);
  napi_value result;
  napi_create_int32(env, (int32_t)sent, &result);
  return result;
}

/* Freed only when both the poll handle has closed and the JS handle has been collected, so a
 * stale JS handle never points at freed memory (it just finds `closing` set). */
typedef struct {
  uv_poll_t poll;
  int fd;
  int closing;
  int closed;
  int finalized;
  napi_env env;
  napi_ref callback;
  napi_async_context async;
} dgram_t;

static void on_poll_closed(uv_handle_t *handle) {
  dgram_t *d = (dgram_t *)handle->data;
  close(d->fd);
  d->closed = 1;
  if (d->finalized) free(d);
}

static void dgram_close_internal(dgram_t *d) {
  if (d->closing) return;
  d->closing = 1;
  uv_poll_stop(&d->poll);
  napi_delete_reference(d->env, d->callback);
  napi_async_destroy(d->env, d->async);
  uv_close((uv_handle_t *)&d->poll, on_poll_closed);
}

static void on_readable(uv_poll_t *handle, int status, int events) {
  dgram_t *d = (dgram_t *)handle->data;
  if (d->closing || status < 0) return;
  static char data[MAX_DGRAM];
  for (;;) {
    /* The kernel puts the credentials first, then the descriptors; more descriptors than fit
     * are closed by the kernel and flagged with MSG_CTRUNC. */
    char control[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(sizeof(int) * 4)];
    struct iovec iov = {data, sizeof data};
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n = recvmsg(d->fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0) return; /* EAGAIN: drained */
    int received = -1;
    int64_t uid = -1, pid = -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET) continue;
      if (c->cmsg_type == SCM_CREDENTIALS && c->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
        struct ucred cred;
        memcpy(&cred, CMSG_DATA(c), sizeof cred);
        uid = cred.uid;
        pid = cred.pid;
        continue;
      }
      if (c->cmsg_type != SCM_RIGHTS) continue;
      int count = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
      int *fds = (int *)CMSG_DATA(c);
      for (int i = 0; i < count; i++) {
        int one;
        memcpy(&one, fds + i, sizeof one);
        if (received < 0) received = one;
        else close(one); /* one descriptor per message, as Envoy sends them */
      }
    }
    if (msg.msg_flags & (MSG_CTRUNC | MSG_TRUNC)) {
      /* Cut short: neither the data nor the credentials can be trusted whole. */
      if (received >= 0) close(received);
      received = -1;
      uid = -1;
    }
    napi_env env = d->env;
    napi_handle_scope scope;
    napi_open_handle_scope(env, &scope);
    napi_value argv[4];
    void *copy;
    napi_create_buffer_copy(env, (size_t)n, data, &copy, &argv[0]);
    napi_create_int32(env, received, &argv[1]);
    napi_create_int64(env, uid, &argv[2]);
    napi_create_int64(env, pid, &argv[3]);
    call_back(env, d->async, d->callback, 4, argv);
    napi_close_handle_scope(env, scope);
    if (d->closing) return;
  }
}

static void dgram_finalize(napi_env env, void *data, void *hint) {
  dgram_t *d = (dgram_t *)data;
  d->finalized = 1;
  if (!d->closing) dgram_close_internal(d); /* dropped without dgramClose() */
  else if (d->closed) free(d);
}

/* Polls `fd` (non-blocking, SO_PASSCRED set) and delivers each datagram to `callback`. */
static napi_value dgram_wrap(napi_env env, int fd, napi_value callback) {
  dgram_t *d = calloc(1, sizeof *d);
  d->fd = fd;
  d->env = env;
  napi_create_reference(env, callback, 1, &d->callback);
  napi_value name;
  napi_create_string_utf8(env, "proxy:dgram", NAPI_AUTO_LENGTH, &name);
  napi_async_init(env, NULL, name, &d->async);
  uv_loop_t *loop;
  napi_get_uv_event_loop(env, &loop);
  uv_poll_init(loop, &d->poll, fd);
  d->poll.data = d;
  uv_poll_start(&d->poll, UV_READABLE, on_readable);
  napi_value handle;
  napi_create_external(env, d, dgram_finalize, NULL, &handle);
  return handle;
}

/* dgramOpen(address: string, onMessage: (buf: Buffer, fd: number, uid: number, pid: number) => void) -> handle.
 * uid is -1 when the kernel attached no credentials or the datagram was cut short. */
static napi_value dgram_open(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  char path[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];
  napi_valuetype t;
  if (argc < 2 || get_string(env, argv[0], path, sizeof path) < 0 || napi_typeof(env, argv[1], &t) != napi_ok || t != napi_function)
    return throw_type(env, "dgramOpen(address, onMessage)");
  struct sockaddr_un addr;
  socklen_t len;
  if (unix_address(path, &addr, &len) < 0) return throw_type(env, "dgramOpen: address is empty or too long");
  struct stat st;
  if (path[0] != '@' && lstat(path, &st) == 0 && S_ISSOCK(st.st_mode)) unlink(path);
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return throw_errno(env, "socket", errno);
  int one = 1;
  if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof one) < 0) {
    int err = errno;
    close(fd);
    return throw_errno(env, "setsockopt(SO_PASSCRED)", err);
  }
  if (bind(fd, (struct sockaddr *)&addr, len) < 0) {
    int err = errno;
    close(fd);
    return throw_errno(env, "bind", err);
  }
  return dgram_wrap(env, fd, argv[1]);
}

/* socketPair() -> [a, b]: a connected AF_UNIX datagram pair (close-on-exec, non-blocking), for a
 * parent and the child it forks: the child's end is inherited, the parent sends on its own. The
 * child's end asks for credentials from the start (SO_PASSCRED), so that what the parent sends
 * before the child adopts its end carries them too. */
static napi_value socket_pair(napi_env env, napi_callback_info info) {
  (void)info;
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) < 0) return throw_errno(env, "socketpair", errno);
  int one = 1;
  if (setsockopt(fds[1], SOL_SOCKET, SO_PASSCRED, &one, sizeof one) < 0) {
    int err = errno;
    close(fds[0]);
    close(fds[1]);
    return throw_errno(env, "setsockopt(SO_PASSCRED)", err);
  }
  return int_pair(env, fds[0], fds[1]);
}

/* dgramAdopt(fd, onMessage) -> handle: an inherited end of socketPair(), polled like dgramOpen's. */
static napi_value dgram_adopt(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  int32_t fd;
  napi_valuetype t;
  if (argc < 2 || napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0 || napi_typeof(env, argv[1], &t) != napi_ok || t != napi_function)
    return throw_type(env, "dgramAdopt(fd, onMessage)");
  int one = 1;
  if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof one) < 0) return throw_errno(env, "setsockopt(SO_PASSCRED)", errno);
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) return throw_errno(env, "fcntl(O_NONBLOCK)", errno);
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  return dgram_wrap(env, fd, argv[1]);
}

/* sendFd(socket, data: Buffer, fd) -> bytes sent: one datagram on a connected socket (a
 * socketPair() end) carrying `fd` as SCM_RIGHTS. Throws EAGAIN for the caller to retry. */
static napi_value send_fd(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  int32_t sock, fd;
  void *data;
  size_t size;
  if (argc < 3 || napi_get_value_int32(env, argv[0], &sock) != napi_ok || napi_get_buffer_info(env, argv[1], &data, &size) != napi_ok ||
      napi_get_value_int32(env, argv[2], &fd) != napi_ok || fd < 0)
    return throw_type(env, "sendFd(socket, buffer, fd)");
  struct iovec iov = {data, size};
  struct msghdr msg;
  memset(&msg, 0, sizeof msg);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  char control[CMSG_SPACE(sizeof(int))];
  attach_fd(&msg, control, sizeof control, fd);
  ssize_t n = sendmsg(sock, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
  if (n < 0) return throw_errno(env, "sendmsg", errno);
  napi_value sent;
  napi_create_int64(env, n, &sent);
  return sent;
}

static dgram_t *get_dgram(napi_env env, napi_value v) {
  void *p = NULL;
  napi_valuetype t;
  if (napi_typeof(env, v, &t) != napi_ok || t != napi_external) return NULL;
  napi_get_value_external(env, v, &p);
  return (dgram_t *)p;
}

/* dgramSend(handle, dest: string, data: Buffer, fd: number) -> bytes sent. fd -1 sends none. */
static napi_value dgram_send(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  dgram_t *d = argc >= 4 ? get_dgram(env, argv[0]) : NULL;
  char path[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];
  void *data;
  size_t size;
  int32_t fd;
  if (!d || d->closing || get_string(env, argv[1], path, sizeof path) < 0 || napi_get_buffer_info(env, argv[2], &data, &size) != napi_ok ||
      napi_get_value_int32(env, argv[3], &fd) != napi_ok)
    return throw_type(env, "dgramSend(handle, dest, buffer, fd)");
  struct sockaddr_un addr;
  socklen_t len;
  if (unix_address(path, &addr, &len) < 0) return throw_type(env, "dgramSend: destination is empty or too long");
  struct iovec iov = {data, size};
  struct msghdr msg;
  memset(&msg, 0, sizeof msg);
  msg.msg_name = &addr;
  msg.msg_namelen = len;
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  char control[CMSG_SPACE(sizeof(int))];
  if (fd >= 0) attach_fd(&msg, control, sizeof control, fd);
  ssize_t n = sendmsg(d->fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
  if (n < 0) return throw_errno(env, "sendmsg", errno);
  napi_value sent;
  napi_create_int64(env, n, &sent);
  return sent;
}

static napi_value dgram_close(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  dgram_t *d = argc >= 1 ? get_dgram(env, argv[0]) : NULL;
  if (!d) return throw_type(env, "dgramClose(handle)");
  dgram_close_internal(d);
  return NULL;
}

void define_sockets(napi_env env, napi_value exports) {
  static const addon_function_t fns[] = {
      {"listenTcp", listen_tcp},
      {"bindUdp", bind_udp},
      {"listenUnix", listen_unix},
      {"closeFd", close_fd},
      {"localPort", local_port},
      {"tcpKeepalive", tcp_keepalive},
      {"sdNotify", sd_notify_send},
      {"dgramOpen", dgram_open},
      {"dgramSend", dgram_send},
      {"dgramClose", dgram_close},
      {"socketPair", socket_pair},
      {"dgramAdopt", dgram_adopt},
      {"sendFd", send_fd},
  };
  define_functions(env, exports, fns, sizeof fns / sizeof fns[0]);
}
