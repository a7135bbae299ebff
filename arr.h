HTTP/1.1 200 OK
Server: BaseHTTP/0.6 Python/3.11.7
Date: Mon, 07 Dec 2026 05:10:44 GMT
Content-Type: application/json
Cache-Control: no-store
Cache-Status: Kiosk;fwd=miss;fwd-status=200;detail=edited
Content-Length: 22
Via: 1.1 kiosk-1ophudu

