# The AF_XDP driver's build: finds libxdp and libbpf (pkg-config) and clang,
# compiles homa_xdp.bpf.c with clang -target bpf, embeds the object as a C
# array, and sets HOMA_XDP_SRC (driver sources) and HOMA_XDP_LIBS. Leaves
# them empty, saying so, when a dependency is missing (scripts/deps.sh
# installs them). HOMA_XDP=OFF builds without the driver.
option(HOMA_XDP "Build the AF_XDP driver when its dependencies are there" ON)
set(HOMA_XDP_SRC "")
set(HOMA_XDP_LIBS "")
set(HOMA_XDP_DIR ${CMAKE_CURRENT_LIST_DIR})
find_package(PkgConfig QUIET)
if(HOMA_XDP AND PKG_CONFIG_FOUND)
  pkg_check_modules(HOMA_LIBXDP QUIET IMPORTED_TARGET libxdp libbpf)
endif()
find_program(HOMA_BPF_CLANG NAMES clang clang-14 clang-15 clang-16)
if(HOMA_XDP AND HOMA_LIBXDP_FOUND AND HOMA_BPF_CLANG AND EXISTS /usr/include/bpf/bpf_helpers.h)
  set(bpf_obj ${CMAKE_CURRENT_BINARY_DIR}/xdp/homa_xdp.bpf.o)
  set(bpf_c ${CMAKE_CURRENT_BINARY_DIR}/xdp/homa_xdp_obj.c)
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-multiarch
    OUTPUT_VARIABLE multiarch OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  add_custom_command(OUTPUT ${bpf_obj}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/xdp
    COMMAND ${HOMA_BPF_CLANG} -O2 -g -Wall -Werror -target bpf
      -I/usr/include/${multiarch} -c ${HOMA_XDP_DIR}/homa_xdp.bpf.c -o ${bpf_obj}
    DEPENDS ${HOMA_XDP_DIR}/homa_xdp.bpf.c
    COMMENT "clang -target bpf homa_xdp.bpf.c")
  add_custom_command(OUTPUT ${bpf_c}
    COMMAND ${CMAKE_COMMAND} -DIN=${bpf_obj} -DOUT=${bpf_c} -P ${HOMA_XDP_DIR}/embed.cmake
    DEPENDS ${bpf_obj} ${HOMA_XDP_DIR}/embed.cmake)
  file(GLOB HOMA_XDP_SRC CONFIGURE_DEPENDS ${HOMA_XDP_DIR}/*.c)
  list(FILTER HOMA_XDP_SRC EXCLUDE REGEX "\\.bpf\\.c$")
  list(APPEND HOMA_XDP_SRC ${bpf_c})
  set(HOMA_XDP_LIBS PkgConfig::HOMA_LIBXDP)
  set(HOMA_HAVE_XDP ON CACHE INTERNAL "the AF_XDP driver is built")
  message(STATUS "AF_XDP driver: on (libxdp, libbpf, ${HOMA_BPF_CLANG})")
else()
  set(HOMA_HAVE_XDP OFF CACHE INTERNAL "the AF_XDP driver is built")
  message(STATUS "AF_XDP driver: off (needs libxdp-dev, libbpf-dev and clang; "
    "the XDP driver reports HOMA_ENOTSUP)")
endif()
