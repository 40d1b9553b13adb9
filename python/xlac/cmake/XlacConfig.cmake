# find_package(Xlac): xlac_add_aot_library (XlacAot.cmake, beside this file).
#
#   cmake -S . -B build -DXlac_DIR=$(xla-compile --cmake-dir)
include("${CMAKE_CURRENT_LIST_DIR}/XlacAot.cmake")
set(Xlac_FOUND TRUE)
