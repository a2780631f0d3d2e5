# Which zstd and libarchive ccpack links, as two targets the libraries use: ccpack::zstd and ccpack::archive.
#
# Normal and sanitizer builds link Debian's shared libraries. The portable build (CCPACK_PORTABLE=ON, used by
# scripts/ci/package) must run in PyTorch images built on other distributions, so it links libcrypto
# (OPENSSL_USE_STATIC_LIBS, set before find_package(OpenSSL)) and libarchive with the filters it needs (xz, gzip,
# bzip2 for zip entries, nettle for its hashes) statically. libstdc++ and libgcc stay shared: linking them
# statically raises the glibc floor to 2.36 (arc4random, _dl_find_object). install.cmake bundles the rest:
#   libtbb.so.12   Debian ships no static oneTBB;
#   libzstd.so.1   Debian's libzstd.a is built without multithreading (its POOL_create is a stub, and
#                  ZSTD_c_nbWorkers fails with "Unsupported parameter"); create needs zstd's workers, for speed and
#                  because the archive's bytes depend on the multithreaded job layout (packer.cpp), so a static
#                  build would write different archives than the normal one.
# Only the object files that ccpack references are taken from libarchive.a: tar and zip readers and the gzip, xz
# and zstd filters, so neither libxml2, libacl nor liblz4 are needed at link time (the link fails if that changes).
add_library(ccpack_zstd INTERFACE)
add_library(ccpack::zstd ALIAS ccpack_zstd)
add_library(ccpack_archive INTERFACE)
add_library(ccpack::archive ALIAS ccpack_archive)

if(NOT CCPACK_PORTABLE)
  target_link_libraries(ccpack_zstd INTERFACE PkgConfig::ZSTD)
  target_link_libraries(ccpack_archive INTERFACE PkgConfig::LIBARCHIVE)
  return()
endif()

if(CCPACK_SANITIZE OR CCPACK_FUZZ)
  message(FATAL_ERROR "CCPACK_PORTABLE is for release packages; build sanitizers and fuzzers without it")
endif()

function(ccpack_static_library var name)
  find_library(${var} NAMES lib${name}.a NO_CACHE REQUIRED)
  set(${var} ${${var}} PARENT_SCOPE)
endfunction()

target_link_libraries(ccpack_zstd INTERFACE PkgConfig::ZSTD)

ccpack_static_library(ARCHIVE_A archive)
ccpack_static_library(LZMA_A lzma)
ccpack_static_library(BZ2_A bz2)
ccpack_static_library(Z_A z)
ccpack_static_library(NETTLE_A nettle)
target_include_directories(ccpack_archive INTERFACE ${LIBARCHIVE_INCLUDE_DIRS})
target_link_libraries(ccpack_archive INTERFACE ${ARCHIVE_A} ${LZMA_A} ${BZ2_A} ${Z_A} ${NETTLE_A} ccpack_zstd)
