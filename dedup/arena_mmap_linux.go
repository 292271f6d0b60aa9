package dedup

import "golang.org/x/sys/unix"

// mapPopulate maps an arena chunk's pages in with the mapping.
const mapPopulate = unix.MAP_POPULATE
