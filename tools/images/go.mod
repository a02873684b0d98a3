module lwstemporal.local/images

go 1.26.0
