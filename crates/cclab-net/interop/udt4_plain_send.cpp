// udt4_plain_send: a plain UDT 4 sender for cclab's interoperability test
// (crates/cclab-net/tests/interop_udt4.rs), as any UDT 4 application sends a
// file: no framing of its own, just UDT::sendfile2 of the whole file and
// UDT::close with UDT's default linger (which waits until the receiver has
// acknowledged everything, then sends the shutdown that ends the receiver's
// stream). `cclab recv --raw` must write exactly the file's bytes.
//
// Written against the API of UDT 4.11 (Debian's libudt-dev, <udt/udt.h>):
// UDT::startup, UDT::socket(AF_INET, SOCK_STREAM, 0), UDT::connect,
// UDT::sendfile2, UDT::close, UDT::cleanup, UDT::getlasterror.
//
// usage: udt4_plain_send HOST PORT FILE

#include <udt/udt.h>

#include <netdb.h>
#include <stdint.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstring>

static int fail(const char* what) {
    std::fprintf(stderr, "udt4_plain_send: %s: %s\n", what, UDT::getlasterror().getErrorMessage());
    return 1;
}

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: udt4_plain_send HOST PORT FILE\n");
        return 2;
    }
    struct stat st;
    if (stat(argv[3], &st) != 0) {
        std::perror(argv[3]);
        return 1;
    }
    addrinfo hints, *peer;
    std::memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_DGRAM;
    if (getaddrinfo(argv[1], argv[2], &hints, &peer) != 0) {
        std::fprintf(stderr, "udt4_plain_send: cannot resolve %s:%s\n", argv[1], argv[2]);
        return 1;
    }
    UDT::startup();
    UDTSOCKET u = UDT::socket(AF_INET, SOCK_STREAM, 0);
    if (u == UDT::INVALID_SOCK) return fail("socket");
    if (UDT::connect(u, peer->ai_addr, peer->ai_addrlen) == UDT::ERROR) return fail("connect");
    freeaddrinfo(peer);
    int64_t offset = 0;
    int64_t sent = UDT::sendfile2(u, argv[3], &offset, st.st_size);
    if (sent == UDT::ERROR) return fail("sendfile2");
    if (sent != (int64_t)st.st_size) {
        std::fprintf(stderr, "udt4_plain_send: sendfile2 sent %lld of %lld bytes\n", (long long)sent,
                     (long long)st.st_size);
        return 1;
    }
    // The default linger: close returns once everything is acknowledged, and the shutdown has left.
    if (UDT::close(u) == UDT::ERROR) return fail("close");
    UDT::cleanup();
    std::printf("udt4_plain_send: sent %lld bytes\n", (long long)sent);
    return 0;
}
