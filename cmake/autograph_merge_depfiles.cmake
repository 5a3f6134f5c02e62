# Used by autograph_check: concatenates <PREFIX>.0.d ... <PREFIX>.<COUNT-1>.d
# (one compiler -MM rule per linted source, all for the same stamp) into
# <PREFIX>.d, the custom command's depfile.
#   cmake -DPREFIX=<stamp> -DCOUNT=<n> -P autograph_merge_depfiles.cmake
set(merged "")
math(EXPR last "${COUNT} - 1")
foreach(i RANGE 0 ${last})
  file(READ "${PREFIX}.${i}.d" rule)
  string(APPEND merged "${rule}")
endforeach()
file(WRITE "${PREFIX}.d" "${merged}")
