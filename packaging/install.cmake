# What `cmake --install` and CPack put in a package, in the usual layout under the prefix:
#   bin/ccpack                                   the binary (RUNPATH $ORIGIN/../lib/ccpack in the portable build)
#   lib/ccpack/libtbb.so.12, libtbbmalloc.so.2   oneTBB, bundled by the portable build (Debian ships no .a)
#   lib/ccpack/libzstd.so.1                      zstd with its worker threads (see portable.cmake)
#   share/man/man1/ccpack.1.gz                   generated from --help by help2man at build time
#   share/bash-completion/completions/ccpack     packaging/completion/ccpack.bash
#   share/doc/ccpack/README.md
# The wheel (packaging/make-wheel.py) takes that tree too, with the metadata in wheel-metadata.json below.
# The same tree is the .tar.gz (unpack anywhere; bin/ccpack finds its lib/ through $ORIGIN) and the .deb
# (installed under /usr). The libraries sit in a private lib/ccpack so the .deb never shadows the system's oneTBB.
include(GNUInstallDirs)

install(TARGETS ccpack RUNTIME DESTINATION bin)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/completion/ccpack.bash DESTINATION share/bash-completion/completions RENAME ccpack)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION share/doc/ccpack)

if(CCPACK_PORTABLE)
  # RUNPATH (not RPATH), so LD_LIBRARY_PATH still wins for someone debugging with another oneTBB.
  set_target_properties(ccpack PROPERTIES INSTALL_RPATH "\$ORIGIN/../lib/ccpack" BUILD_WITH_INSTALL_RPATH OFF)
  target_link_options(ccpack PRIVATE -Wl,--enable-new-dtags)
  # libtbb loads libtbbmalloc.so.2 from its own folder when it is there, as it does on the build machine.
  foreach(tbb_target TBB::tbb TBB::tbbmalloc)
    get_target_property(lib ${tbb_target} LOCATION)
    get_target_property(soname ${tbb_target} IMPORTED_SONAME_NONE)
    if(NOT soname)
      get_target_property(soname ${tbb_target} IMPORTED_SONAME)
    endif()
    if(NOT lib OR NOT soname)
      message(FATAL_ERROR "cannot find the shared library of ${tbb_target} to bundle")
    endif()
    install(FILES ${lib} DESTINATION lib/ccpack RENAME ${soname})
  endforeach()
  find_library(ZSTD_SO NAMES zstd PATHS ${ZSTD_LIBRARY_DIRS} NO_CACHE REQUIRED)
  get_filename_component(zstd_real ${ZSTD_SO} REALPATH)
  get_filename_component(zstd_name ${zstd_real} NAME)
  string(REGEX REPLACE "^(libzstd\\.so\\.[0-9]+).*" "\\1" zstd_soname ${zstd_name})
  install(FILES ${zstd_real} DESTINATION lib/ccpack RENAME ${zstd_soname})
endif()

# The man page: help2man runs the built binary (--help, --version, and each subcommand's --help).
find_program(HELP2MAN help2man)
if(HELP2MAN)
  set(man ${CMAKE_CURRENT_BINARY_DIR}/ccpack.1.gz)
  add_custom_command(OUTPUT ${man}
    COMMAND ${CMAKE_COMMAND} -E env HELP2MAN=${HELP2MAN}
            sh ${PROJECT_SOURCE_DIR}/packaging/make-man.sh $<TARGET_FILE:ccpack> ${man}
    DEPENDS ccpack ${PROJECT_SOURCE_DIR}/packaging/make-man.sh
    COMMENT "Generating the man page with help2man")
  add_custom_target(ccpack_man ALL DEPENDS ${man})
  install(FILES ${man} DESTINATION share/man/man1)
elseif(CCPACK_PORTABLE)
  message(FATAL_ERROR "the portable build ships a man page: install help2man (scripts/setup does)")
endif()

set(CPACK_PACKAGE_NAME ccpack)
set(CPACK_PACKAGE_VENDOR "ccpack")
set(CPACK_PACKAGE_CONTACT "ccpack maintainers <ccpack@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_HOMEPAGE_URL "${PROJECT_HOMEPAGE_URL}")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_FILE_NAME ccpack-${PROJECT_VERSION}-linux-${CMAKE_SYSTEM_PROCESSOR})
set(CPACK_GENERATOR "TGZ;DEB")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
# The glibc floor is owned by scripts/ci/check-glibc-floor, which checks it; libstdc++ 12 is the compiler's.
file(STRINGS ${PROJECT_SOURCE_DIR}/scripts/ci/check-glibc-floor floor_line REGEX "^FLOOR=")
string(REPLACE "FLOOR=" "" CCPACK_GLIBC_FLOOR "${floor_line}")
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= ${CCPACK_GLIBC_FLOOR}), libstdc++6 (>= 12), libgcc-s1")
# What the wheel's METADATA and its platform tag (manylinux_<floor>_<arch>) say, from the same owners.
file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/wheel-metadata.json CONTENT [[{
  "name": "@PROJECT_NAME@",
  "version": "@PROJECT_VERSION@",
  "summary": "@PROJECT_DESCRIPTION@",
  "homepage": "@PROJECT_HOMEPAGE_URL@",
  "license": "@CCPACK_LICENSE@",
  "glibc_floor": "@CCPACK_GLIBC_FLOOR@",
  "arch": "@CMAKE_SYSTEM_PROCESSOR@"
}
]] @ONLY)
include(CPack)
