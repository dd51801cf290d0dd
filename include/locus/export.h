#pragma once
/// \file export.h
/// What liblocus exports. Note [Export table]: the library is compiled with hidden visibility,
/// so a symbol is exported only where a header says so. Every public header (include/locus) is
/// one LOCUS_API_BEGIN ... LOCUS_API_END region: the export table is the public API. The few
/// internal headers that the run-time-loaded backend modules (liblocus_cuda, liblocus_nccl,
/// liblocus_mpi) and
/// Locus's own tests build on open the same region, with a comment saying so; they are not
/// public API and carry no compatibility promise between versions (a module checks that it was
/// built with the same Locus before it is used: src/runtime/backend_module.h).

#if defined(__GNUC__) || defined(__clang__)
/// Exports one declaration from liblocus.
#define LOCUS_API __attribute__((visibility("default")))
/// Opens a region whose declarations liblocus exports (closed by LOCUS_API_END).
#define LOCUS_API_BEGIN _Pragma("GCC visibility push(default)")
/// Closes the region LOCUS_API_BEGIN opened.
#define LOCUS_API_END _Pragma("GCC visibility pop")
#else
#define LOCUS_API
#define LOCUS_API_BEGIN
#define LOCUS_API_END
#endif
