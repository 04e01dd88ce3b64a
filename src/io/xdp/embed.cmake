# Writes ${OUT}: the bytes of ${IN} (the compiled XDP program) as the C
# array homa_xdp_bpf_obj and its length homa_xdp_bpf_obj_len (xdp_drv.h).
file(READ ${IN} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE ${OUT} "/* Generated from homa_xdp.bpf.c by embed.cmake; do not edit. */\n"
  "#include \"xdp_drv.h\"\n"
  "const unsigned char homa_xdp_bpf_obj[] = {${bytes}};\n"
  "const unsigned long homa_xdp_bpf_obj_len = sizeof(homa_xdp_bpf_obj);\n")
