package dedup

// mapPopulate is 0: macOS has no MAP_POPULATE.
const mapPopulate = 0
