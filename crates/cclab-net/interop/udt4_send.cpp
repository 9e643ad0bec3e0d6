// udt4_send: the reference UDT sender of cclab's interoperability test
// (crates/cclab-net/tests/interop_udt4.rs). It connects to HOST PORT as a UDT
// caller (UDT_STREAM) and sends FILE as cclab's stream: the content's length
// (8 bytes, big-endian), the content, then its FNV-1a 64-bit checksum (8 bytes,
// big-endian). It exits 0 once the receiver has acknowledged every byte and the
// connection is closed, non-zero with a message on any error.
//
// Written against the API of UDT 4.11 (Debian's libudt-dev, <udt/udt.h>, see
// its doc/ pages): UDT::startup, UDT::socket(AF_INET, SOCK_STREAM, 0),
// UDT::setsockopt(UDT_LINGER), UDT::connect, UDT::send (blocking; it may take
// fewer bytes than asked), UDT::getsockopt(UDT_SNDDATA), UDT::getsockstate,
// UDT::perfmon, UDT::close, UDT::cleanup, UDT::getlasterror.
//
// usage: udt4_send HOST PORT FILE [CHUNK]
//   CHUNK (default 65536) is how many file bytes go to one UDT::send call.
//   UDT 4 starts a new packet at every send call, so the length, each chunk
//   and the checksum begin packets of their own, as in any UDT application.
//   CHUNK 0 instead hands the whole framed stream to UDT::send as one buffer,
//   which puts packet boundaries at multiples of the payload size.

#include <udt/udt.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <stdint.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static void fail(const char* what) {
    std::fprintf(stderr, "udt4_send: %s: %s\n", what, UDT::getlasterror().getErrorMessage());
    std::exit(1);
}

static void put_be64(unsigned char* out, uint64_t v) {
    for (int i = 7; i >= 0; --i, v >>= 8) out[i] = (unsigned char)(v & 0xff);
}

static void send_all(UDTSOCKET u, const char* data, int64_t len) {
    while (len > 0) {
        int n = UDT::send(u, data, len > (1 << 30) ? (1 << 30) : (int)len, 0);
        if (n == UDT::ERROR) fail("send");
        data += n;
        len -= n;
    }
}

static double now_s() {
    timeval tv;
    gettimeofday(&tv, 0);
    return tv.tv_sec + tv.tv_usec / 1e6;
}

int main(int argc, char** argv) {
    if (argc != 4 && argc != 5) {
        std::fprintf(stderr, "usage: udt4_send HOST PORT FILE [CHUNK]\n");
        return 2;
    }
    long chunk = argc == 5 ? std::atol(argv[4]) : 65536;
    FILE* f = std::fopen(argv[3], "rb");
    if (!f) {
        std::perror(argv[3]);
        return 1;
    }
    std::vector<char> content;
    char buf[65536];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) content.insert(content.end(), buf, buf + n);
    std::fclose(f);
    uint64_t hash = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < content.size(); ++i) hash = (hash ^ (unsigned char)content[i]) * 0x100000001b3ULL;
    unsigned char header[8], trailer[8];
    put_be64(header, content.size());
    put_be64(trailer, hash);

    addrinfo hints, *peer;
    std::memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_DGRAM;
    if (getaddrinfo(argv[1], argv[2], &hints, &peer) != 0) {
        std::fprintf(stderr, "udt4_send: cannot resolve %s:%s\n", argv[1], argv[2]);
        return 1;
    }
    UDT::startup();
    UDTSOCKET u = UDT::socket(AF_INET, SOCK_STREAM, 0);
    if (u == UDT::INVALID_SOCK) fail("socket");
    // UDT::close waits (lingers) until the receiver has acknowledged everything, at most 30 s.
    linger l = {1, 30};
    if (UDT::setsockopt(u, 0, UDT_LINGER, &l, sizeof l) == UDT::ERROR) fail("setsockopt(UDT_LINGER)");
    if (UDT::connect(u, peer->ai_addr, peer->ai_addrlen) == UDT::ERROR) fail("connect");
    freeaddrinfo(peer);
    double start = now_s();

    if (chunk <= 0) {
        std::vector<char> stream(header, header + 8);
        stream.insert(stream.end(), content.begin(), content.end());
        stream.insert(stream.end(), trailer, trailer + 8);
        send_all(u, &stream[0], stream.size());
    } else {
        send_all(u, (const char*)header, 8);
        for (size_t at = 0; at < content.size(); at += chunk)
            send_all(u, &content[at], content.size() - at < (size_t)chunk ? content.size() - at : chunk);
        send_all(u, (const char*)trailer, 8);
    }

    // Everything is acknowledged when the send buffer is empty (UDT_SNDDATA, in packets).
    for (;;) {
        int32_t pending = 0;
        int len = sizeof pending;
        if (UDT::getsockopt(u, 0, UDT_SNDDATA, &pending, &len) == UDT::ERROR) fail("getsockopt(UDT_SNDDATA)");
        if (pending == 0) break;
        if (UDT::getsockstate(u) != CONNECTED) {
            std::fprintf(stderr, "udt4_send: connection lost with %d packets unacknowledged\n", pending);
            return 1;
        }
        if (now_s() - start > 60) {
            std::fprintf(stderr, "udt4_send: %d packets still unacknowledged after 60 s\n", pending);
            return 1;
        }
        usleep(1000);
    }
    double elapsed = now_s() - start;
    UDT::TRACEINFO perf;
    if (UDT::perfmon(u, &perf) == UDT::ERROR) fail("perfmon");
    if (UDT::close(u) == UDT::ERROR) fail("close");
    UDT::cleanup();
    std::printf("udt4_send: sent %zu bytes, fnv1a64 %016llx, in %.3f s; packets %lld, retransmitted %d, "
                "NAKs received %d, ACKs received %d, RTT %.3f ms\n",
                content.size(), (unsigned long long)hash, elapsed, (long long)perf.pktSentTotal,
                perf.pktRetransTotal, perf.pktRecvNAKTotal, perf.pktRecvACKTotal, perf.msRTT);
    return 0;
}
