module dratopo/tools/hwdb-import

go 1.26
