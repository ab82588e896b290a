# Breaks every rule e2e/lint-dockerfile checks (its test expects each finding).
FROM debian AS build
RUN apt-get update && apt-get install -y g++ | tee /dev/null
ADD . /src
FROM ubuntu:latest
RUN apt-get update && apt-get install -y --no-install-recommends libssl3
COPY --from=build /src/build/release/injector/injector /usr/local/bin/injector
COPY scripts /scripts
ENTRYPOINT /usr/local/bin/injector
