# xlac_add_aot_library: link an ahead-of-time compiled StableHLO program into
# a C or C++ program.
#
#   find_package(Xlac REQUIRED)                       # cmake -DXlac_DIR=$(xla-compile --cmake-dir)
#   xlac_add_aot_library(model model.mlir)            # -> target `model`
#   target_link_libraries(app PRIVATE model)          # #include "model.h"
#
# This file ships in the xlac wheel (xlac/cmake/, which `xla-compile --cmake-dir`
# prints); `include(<that dir>/XlacAot.cmake)` works as well as find_package.
#
# Options:
#   ENTRIES main predict   entry functions (default: main); each becomes
#                          `int <prefix>_<entry>(const void *const *in, void *const *out)`
#   PREFIX name            C symbol prefix (default: the target's name)
#   TARGET cpu             xlac target (default: cpu)
#   DISABLE_PASSES a b     passes to skip (bisecting)
#
# The program is compiled at build time by `xla-compile` (found next to the
# Python in XLAC_PYTHON_BIN, in the environment this file was installed into,
# on PATH, or given as -DXLAC_COMPILE=...), into
# lib<name>.so and <name>.h under the build directory, and rebuilt when the
# .mlir file changes. The code is made for the CPU of the build machine.
include_guard(GLOBAL)
# <prefix>/lib/pythonX.Y/site-packages/xlac/cmake -> <prefix>/bin
set(_XLAC_INSTALLED_BIN "${CMAKE_CURRENT_LIST_DIR}/../../../../../bin")

function(_xlac_find_compiler)
  if(XLAC_COMPILE)
    return()
  endif()
  find_program(XLAC_COMPILE NAMES xla-compile
               HINTS "${XLAC_PYTHON_BIN}" "${_XLAC_INSTALLED_BIN}" "$ENV{VIRTUAL_ENV}/bin"
               DOC "xlac's ahead-of-time compiler")
  if(NOT XLAC_COMPILE)
    message(FATAL_ERROR "xla-compile not found: pip install xlac, or pass -DXLAC_COMPILE=/path/to/xla-compile")
  endif()
endfunction()

function(xlac_add_aot_library name source)
  cmake_parse_arguments(PARSE_ARGV 2 ARG "" "PREFIX;TARGET" "ENTRIES;DISABLE_PASSES")
  _xlac_find_compiler()
  if(NOT ARG_PREFIX)
    string(MAKE_C_IDENTIFIER "${name}" ARG_PREFIX)
  endif()
  if(NOT ARG_TARGET)
    set(ARG_TARGET cpu)
  endif()
  if(NOT ARG_ENTRIES)
    set(ARG_ENTRIES main)
  endif()
  get_filename_component(input "${source}" ABSOLUTE)
  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/xlac_${name}")
  set(library "${out_dir}/lib${name}.so")
  set(header "${out_dir}/${name}.h")
  file(MAKE_DIRECTORY "${out_dir}")     # imported targets need their include dir now
  string(REPLACE ";" "," entries "${ARG_ENTRIES}")
  set(extra)
  if(ARG_DISABLE_PASSES)
    string(REPLACE ";" "," disabled "${ARG_DISABLE_PASSES}")
    list(APPEND extra "--disable-passes=${disabled}")
  endif()
  add_custom_command(
    OUTPUT "${library}" "${header}"
    COMMAND "${XLAC_COMPILE}" "${input}" -o "${library}" --header "${header}"
            --name "${ARG_PREFIX}" --entry "${entries}" --target "${ARG_TARGET}" ${extra}
    DEPENDS "${input}"
    COMMENT "xla-compile ${source} -> lib${name}.so"
    VERBATIM)
  add_custom_target(${name}_xla_compile DEPENDS "${library}" "${header}")
  add_library(${name} SHARED IMPORTED GLOBAL)
  set_target_properties(${name} PROPERTIES
    IMPORTED_LOCATION "${library}"
    IMPORTED_SONAME "lib${name}.so"
    INTERFACE_INCLUDE_DIRECTORIES "${out_dir}")
  add_dependencies(${name} ${name}_xla_compile)
endfunction()
