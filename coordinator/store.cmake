# dt_store lives in its own folder (coordinator/store/CMakeLists.txt).
add_subdirectory(${CMAKE_CURRENT_LIST_DIR}/store ${CMAKE_BINARY_DIR}/coordinator/store)
