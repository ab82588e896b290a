// Asio, Asio SSL, Beast and Boost.URL compiled once for the whole project
// (BOOST_ASIO_SEPARATE_COMPILATION / BOOST_BEAST_SEPARATE_COMPILATION are set on harness::net),
// so that two cores build the project quickly.
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
#include <boost/url/src.hpp>
