"""CityNav: aerial vision-and-language navigation over cities (CityNav, sections 3-4): city
maps and embedded cities, episodes and suites, reference paths, the public data format, the
geographic semantic map and the baseline policies; ROS-free."""
