// Thread-locals that every jitted call reads. In a shared library, C++'s default TLS model
// (global-dynamic) calls __tls_get_addr on each access: 5% of a cache hit. The initial-exec
// model reads them at a fixed offset from the thread pointer instead. They are a few hundred
// bytes, which the static TLS space glibc keeps for libraries loaded with dlopen still holds.
#pragma once

#define JX_HOT_THREAD_LOCAL [[gnu::tls_model("initial-exec")]] thread_local
