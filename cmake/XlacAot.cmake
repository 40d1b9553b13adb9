# In a source checkout: the helper that ships in the wheel (python/xlac/cmake/).
include("${CMAKE_CURRENT_LIST_DIR}/../python/xlac/cmake/XlacAot.cmake")
