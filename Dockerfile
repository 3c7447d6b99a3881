# convmem's service image, built from the package: a wheel is built from this checkout in the first
# stage and installed (with the PostgreSQL extra) in the second; the source tree is not copied in.
#   docker build -t convmem .
#   docker run -p 8000:8000 -v convmem-data:/data convmem            # the service, SQLite in /data
#   docker run -v convmem-data:/data convmem keys create --tenant acme --role app
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY src ./src
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM python:3.11-slim
RUN useradd --create-home --uid 10001 convmem && mkdir /data && chown convmem /data
COPY --from=build /wheels /wheels
RUN wheel="$(ls /wheels/convmem-*.whl)" \
    && pip install --no-cache-dir "${wheel}[postgres,redis]" \
    && rm -rf /wheels
USER convmem
# every command reads these (CONVMEM_DB may be a postgresql:// URL instead of a file)
ENV CONVMEM_DB=/data/convmem.db \
    CONVMEM_HOST=0.0.0.0 \
    CONVMEM_PORT=8000 \
    PYTHONUNBUFFERED=1
VOLUME /data
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz')"
ENTRYPOINT ["convmem"]
CMD ["serve"]
