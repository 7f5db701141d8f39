#!/bin/sh
# Passes when the dynamic section of $1 (fakecuda's libcuda.so.1) carries the
# SYMBOLIC flag: the driver binds its own calls internally.
readelf -d "$1" | grep -Eq '\(SYMBOLIC\)|\(FLAGS\).*SYMBOLIC'
