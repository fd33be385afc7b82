# Finds Gecode, which ships no CMake package on Debian.
# Defines Gecode::Gecode (int, search, minimodel, kernel, support) and
# Gecode_FOUND, Gecode_VERSION.
find_path(Gecode_INCLUDE_DIR gecode/kernel.hh)
set(_gecode_components minimodel search int kernel support)
set(_gecode_libs)
foreach(_c IN LISTS _gecode_components)
  find_library(Gecode_${_c}_LIBRARY NAMES gecode${_c})
  list(APPEND _gecode_libs Gecode_${_c}_LIBRARY)
endforeach()
if(Gecode_INCLUDE_DIR AND EXISTS "${Gecode_INCLUDE_DIR}/gecode/support/config.hpp")
  file(STRINGS "${Gecode_INCLUDE_DIR}/gecode/support/config.hpp" _gecode_version_line
       REGEX "^#define GECODE_VERSION \"[0-9.]+\"")
  string(REGEX REPLACE ".*\"([0-9.]+)\".*" "\\1" Gecode_VERSION "${_gecode_version_line}")
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Gecode
  REQUIRED_VARS Gecode_INCLUDE_DIR ${_gecode_libs}
  VERSION_VAR Gecode_VERSION)
if(Gecode_FOUND AND NOT TARGET Gecode::Gecode)
  add_library(Gecode::Gecode INTERFACE IMPORTED)
  set_target_properties(Gecode::Gecode PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${Gecode_INCLUDE_DIR}")
  foreach(_c IN LISTS _gecode_components)
    set_property(TARGET Gecode::Gecode APPEND PROPERTY
      INTERFACE_LINK_LIBRARIES "${Gecode_${_c}_LIBRARY}")
  endforeach()
endif()
mark_as_advanced(Gecode_INCLUDE_DIR)
