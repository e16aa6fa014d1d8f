"""The Streamlit leaderboard (app.py) and its data, views and charts."""
