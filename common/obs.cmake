# dt_obs lives in its own folder (common/obs/CMakeLists.txt).
add_subdirectory(${CMAKE_CURRENT_LIST_DIR}/obs ${CMAKE_BINARY_DIR}/common/obs)
